// Sealing runtime secret values at rest (docs/secrets.md): AES-256-GCM, blob = 0x01 ‖ 12-byte
// random nonce ‖ ciphertext ‖ 16-byte tag. The pool name and version id are the associated data,
// so a sealed value copied to another row does not open there.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { SECRET_KEY_BYTES } from "../../compiler/index.js";

const FORMAT = 0x01;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class Sealer {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new Error(`the sealing key must be ${SECRET_KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
  }

  seal(pool: string, id: string, plaintext: Buffer): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(pool, id));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT]), nonce, ciphertext, cipher.getAuthTag()]);
  }

  /** The plaintext; throws when the blob is not of this format or was sealed with another key or for another row. */
  open(pool: string, id: string, sealed: Uint8Array): Buffer {
    const blob = Buffer.from(sealed);
    if (blob.length < 1 + NONCE_BYTES + TAG_BYTES || blob[0] !== FORMAT) throw new Error("not a sealed secret of format 1");
    const nonce = blob.subarray(1, 1 + NONCE_BYTES);
    const tag = blob.subarray(blob.length - TAG_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", this.key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(pool, id));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(blob.subarray(1 + NONCE_BYTES, blob.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new Error("cannot open the sealed value (another key, or the row was altered)");
    }
  }
}

function associatedData(pool: string, id: string): Buffer {
  return Buffer.from(`${pool}\n${id}`, "utf8");
}
