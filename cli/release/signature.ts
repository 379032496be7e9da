// Step 4: the detached signature over the checksums file: standard base64 of a 64-byte Ed25519
// signature, checked with a PEM `PUBLIC KEY` (SPKI) holding an Ed25519 key.
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { fail } from "./failure.js";
import { STANDARD_BASE64 } from "./shapes.js";

export function ed25519PublicKey(pem: string, file: string): KeyObject {
  if (!/^-----BEGIN PUBLIC KEY-----\r?\n/.test(pem.trimStart())) fail(`public key "${file}" is not a PEM "PUBLIC KEY"`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    fail(`public key "${file}" is not a readable PEM public key`);
  }
  if (key.asymmetricKeyType !== "ed25519") fail(`public key "${file}" is not an Ed25519 key (${key.asymmetricKeyType ?? "unknown type"})`);
  return key;
}

export function verifySignature(checksums: Buffer, checksumsFile: string, signatureText: string, signatureFile: string, key: KeyObject, keyFile: string): void {
  const text = signatureText.trim();
  const signature = STANDARD_BASE64.test(text) ? Buffer.from(text, "base64") : undefined;
  if (!signature || signature.length !== 64) fail(`signature "${signatureFile}" is not base64 of a 64-byte Ed25519 signature`);
  if (!verify(null, checksums, key, signature)) fail(`signature "${signatureFile}" does not match checksums file "${checksumsFile}" with public key "${keyFile}"`);
}
