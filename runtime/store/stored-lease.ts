// A leased message as a store read it: the payload as bytes or as base64, the headers and trace as the
// JSON text stored at ingress. The Pull API's reply (runtime/pull/encode.ts) writes the base64 and
// the JSON text as they are; `payload`, `headers` and `trace` are decoded only when something reads
// them (the gRPC binding, the Store contract), once. Measured on the PostgreSQL drain, decoding hex
// `bytea` and parsing the stored headers, only to encode both again, was 4% of the server's CPU.
import type { Headers, LeasedMessage } from "./records.js";

export class StoredLease implements LeasedMessage {
  private bytes: Uint8Array | undefined;
  private b64: string | undefined;
  private parsedHeaders: Headers | undefined;
  private parsedTrace: Headers | null | undefined;
  readonly traceJson: string | null;

  constructor(
    readonly id: string,
    readonly leaseId: string,
    readonly route: string,
    readonly target: string,
    /** Bytes, or base64 text (a string). */
    payload: Uint8Array | string,
    readonly headersJson: string,
    traceJson: string | null,
    readonly receivedAtMs: number,
    readonly attempt: number,
    readonly leaseUntilMs: number,
  ) {
    // A JSON null stored as the trace is no trace, as the parsed value would be.
    this.traceJson = traceJson === "null" ? null : traceJson;
    if (typeof payload === "string") this.b64 = payload;
    else this.bytes = payload;
  }

  get payload(): Uint8Array {
    return (this.bytes ??= Buffer.from(this.b64!, "base64"));
  }

  get payloadB64(): string {
    return (this.b64 ??= Buffer.from(this.bytes!.buffer, this.bytes!.byteOffset, this.bytes!.byteLength).toString("base64"));
  }

  get headers(): Headers {
    return (this.parsedHeaders ??= JSON.parse(this.headersJson) as Headers);
  }

  get trace(): Headers | null {
    if (this.parsedTrace === undefined) this.parsedTrace = this.traceJson === null ? null : (JSON.parse(this.traceJson) as Headers);
    return this.parsedTrace;
  }
}
