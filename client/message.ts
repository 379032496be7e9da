// A leased message as the client library hands it over: the dequeue item's fields in JavaScript
// shapes, the payload decoded by its content type, and the raw bytes.

/** A dequeue item as the Pull API writes it (docs/api.md "Pull API"). */
export interface PullItem {
  id: string;
  lease_id: string;
  route: string;
  target: string;
  payload_b64: string;
  headers: Record<string, string>;
  received_at: string;
  attempt: number;
  lease_until: string;
}

export interface Message<Payload = unknown> {
  /** The message id (stable across deliveries). */
  readonly id: string;
  /** This delivery's lease; ack, nack and extend name it. */
  readonly leaseId: string;
  readonly route: string;
  readonly target: string;
  /** 1 on the first delivery, one more on each redelivery. */
  readonly attempt: number;
  /** The stored request headers, canonical names (`Content-Type`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly receivedAt: Date;
  /** When the lease runs out as the server set it (an extend moves it later). */
  readonly leaseUntil: Date;
  /** The Content-Type header, if the request had one. */
  readonly contentType: string | undefined;
  /**
   * The payload decoded: a JSON value when the content type is JSON (`application/json`, `…+json`)
   * and the bytes parse, the text for `text/*`, otherwise the raw bytes.
   */
  readonly payload: Payload;
  /** The payload's bytes as received. */
  readonly raw: Buffer;
}

export function toMessage(item: PullItem): Message {
  return new PulledMessage(item);
}

/** The bytes, the decoded payload and the dates are made when first read (a worker that only acks reads none). */
class PulledMessage implements Message {
  readonly id: string;
  readonly leaseId: string;
  readonly route: string;
  readonly target: string;
  readonly attempt: number;
  readonly headers: Readonly<Record<string, string>>;
  private readonly item: PullItem;
  private bytes: Buffer | undefined;
  private decoded: { value: unknown } | undefined;

  constructor(item: PullItem) {
    this.item = item;
    this.id = item.id;
    this.leaseId = item.lease_id;
    this.route = item.route;
    this.target = item.target;
    this.attempt = item.attempt;
    this.headers = item.headers;
  }

  get receivedAt(): Date {
    return new Date(this.item.received_at);
  }

  get leaseUntil(): Date {
    return new Date(this.item.lease_until);
  }

  get contentType(): string | undefined {
    return headerValue(this.item.headers, "content-type");
  }

  get raw(): Buffer {
    return (this.bytes ??= Buffer.from(this.item.payload_b64, "base64"));
  }

  get payload(): unknown {
    return (this.decoded ??= { value: decodePayload(this.raw, this.contentType) }).value;
  }

  toJSON(): Record<string, unknown> {
    const { id, leaseId, route, target, attempt, headers, receivedAt, leaseUntil, contentType, payload } = this;
    return { id, leaseId, route, target, attempt, headers, receivedAt, leaseUntil, contentType, payload: Buffer.isBuffer(payload) ? this.item.payload_b64 : payload };
  }
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

export function decodePayload(raw: Buffer, contentType: string | undefined): unknown {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return JSON.parse(raw.toString("utf8"));
    } catch {
      return raw;
    }
  }
  if (type.startsWith("text/")) return raw.toString("utf8");
  return raw;
}
