// Small HTTP helpers for app tests: JSON in, status/headers/JSON out.
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; signal?: AbortSignal } = {}): Promise<Reply> {
  const response = await fetch(url, { method: init.method ?? "POST", headers: init.headers, body: init.body, signal: init.signal });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
}

export async function pullCall(base: string, op: string, token: string, body: unknown = {}): Promise<Reply> {
  return call(`${base}/${op}`, { headers: bearer(token), body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** Polls `probe` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
