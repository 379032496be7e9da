// Sealing secret values: AES-256-GCM, a fresh 96-bit nonce per write, the path as additional
// authenticated data, so a ciphertext copied to another path (or edited) fails to open.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface Sealed {
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export class OpenError extends Error {
  constructor(readonly path: string) {
    super(`the stored value of ${path} failed authentication (tampered, moved or wrong key)`);
    this.name = "OpenError";
  }
}

export function seal(key: Buffer, path: string, value: Buffer): Sealed {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(path, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(value), cipher.final()]);
  return { nonce, ciphertext, tag: cipher.getAuthTag() };
}

export function open(key: Buffer, path: string, sealed: Sealed): Buffer {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.nonce);
    decipher.setAAD(Buffer.from(path, "utf8"));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    throw new OpenError(path);
  }
}
