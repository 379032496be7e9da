// Server-sent events from a byte stream (the HTML standard's event-stream format, the parts the
// Pull API's stream uses): events separated by a blank line, `field: value` lines, comments
// starting with a colon.

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** Yields each event of `body` (comments are skipped) until it ends. */
export async function* readEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  // A line ends at CRLF, LF or CR. A CR that ended the previous chunk has already ended its line,
  // so an LF that starts the next chunk is the rest of that CRLF, not a second (blank) line.
  let afterCr = false;
  for await (const chunk of body) {
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (afterCr && text.startsWith("\n")) {
      text = text.slice(1);
      afterCr = false;
    }
    if (text === "") continue;
    afterCr = text.endsWith("\r");
    buffer += text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) yield event;
    }
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let id: string | undefined;
  let event = "message";
  let data: string | undefined;
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
  }
  return data === undefined ? undefined : { id, event, data };
}
