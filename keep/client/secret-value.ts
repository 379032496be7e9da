// A secret that cannot be printed, inspected or serialized by accident: the string lives in a
// private field, every conversion gives "[redacted]", toJSON throws, and reveal() is the only way out.
import { inspect } from "node:util";

const REDACTED = "[redacted]";

export class SecretValue {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    Object.freeze(this);
  }

  /** The secret itself. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  toJSON(): never {
    throw new TypeError("a SecretValue cannot be serialized; call reveal() where the value is needed");
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
