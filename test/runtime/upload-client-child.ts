// Child process for http-server.test.ts: one large streamed upload to 127.0.0.1:<port>, run in its
// own process so that client and server really race (in one process they take turns, which hides a
// reset that overtakes the reply). Prints one JSON line: what came back and how the upload ended.
//
//   node upload-client-child.js <port> <bytes> <content-length|chunked> <stop|keep-sending>
//
// "stop" is a well-behaved node:http client that stops sending when the reply arrives; "keep-sending"
// is a raw socket that ignores the reply and sends until the server cuts it off.
import { request } from "node:http";
import { connect } from "node:net";

export interface UploadOutcome {
  /** Status and body of the reply, when one was received whole. */
  status: number | null;
  body: string | null;
  /** The reply's Connection header. */
  connection: string | null;
  sentBytes: number;
  /** The client's error code (EPIPE, ECONNRESET, …) when the upload failed. */
  error: string | null;
  /** Every byte was sent (the server never cut the upload off). */
  finished: boolean;
}

const [portText, bytesText, framing, behaviour] = process.argv.slice(2);
const port = Number(portText);
const totalBytes = Number(bytesText);
const withContentLength = framing === "content-length";
const data = Buffer.alloc(64 * 1024, 0x61);

const outcome = await (behaviour === "stop" ? stopAtReply() : keepSending());
process.stdout.write(JSON.stringify(outcome) + "\n");

function stopAtReply(): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { "content-type": "application/octet-stream" };
    if (withContentLength) headers["content-length"] = totalBytes;
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/upload", headers });
    const outcome: UploadOutcome = { status: null, body: null, connection: null, sentBytes: 0, error: null, finished: false };
    let replied = false;
    const pump = () => {
      while (!replied && outcome.sentBytes < totalBytes) {
        outcome.sentBytes += data.length;
        if (!req.write(data)) return void req.once("drain", pump);
      }
      if (!replied) {
        outcome.finished = true;
        req.end();
      }
    };
    req.on("socket", (socket) => socket.once("close", () => resolve(outcome)));
    req.on("response", (res) => {
      replied = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (part) => (text += part));
      res.on("end", () => {
        outcome.status = res.statusCode ?? null;
        outcome.body = text;
        outcome.connection = res.headers.connection ?? null;
      });
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (!replied) outcome.error = error.code ?? error.message;
    });
    pump();
  });
}

function keepSending(): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const outcome: UploadOutcome = { status: null, body: null, connection: null, sentBytes: 0, error: null, finished: false };
    socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\n${withContentLength ? `Content-Length: ${totalBytes}` : "Transfer-Encoding: chunked"}\r\n\r\n`);
    const chunk = withContentLength ? data : Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
    let received = "";
    const pump = () => {
      while (outcome.sentBytes < totalBytes && !socket.destroyed) {
        outcome.sentBytes += data.length;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
      if (!socket.destroyed) {
        outcome.finished = true;
        socket.end(withContentLength ? "" : "0\r\n\r\n");
      }
    };
    socket.setEncoding("utf8");
    socket.on("data", (text) => (received += text));
    socket.on("error", (error: NodeJS.ErrnoException) => (outcome.error ??= error.code ?? error.message));
    socket.on("close", () => {
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      const headerEnd = received.indexOf("\r\n\r\n");
      if (match && headerEnd >= 0) {
        outcome.status = Number(match[1]);
        outcome.body = received.slice(headerEnd + 4);
        outcome.connection = /\r\nconnection: *([^\r]*)/i.exec(received.slice(0, headerEnd))?.[1] ?? null;
      }
      resolve(outcome);
    });
    pump();
  });
}
