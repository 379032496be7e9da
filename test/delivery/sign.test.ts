import { createHash, createHmac } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSigner, decodeStandardWebhooksSecret, FILE_SECRET_REFRESH_MS, NoValidSecretError, selectSecret } from "../../runtime/delivery/sign.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { HMAC_SIGNING, WEBHOOKS_SIGNING } from "./helpers.js";

// The expected values are computed here from the documented formula, not with the code under test.
function expectedSpoolSignature(secret: string, path: string, unixSeconds: number, body: Buffer): string {
  const bodyHash = createHash("sha256").update(body).digest("hex");
  return createHmac("sha256", secret).update(`POST\n${path}\n${unixSeconds}\n${bodyHash}`).digest("hex");
}

const hmac = suite("outbound hmac signing");
const nowMs = 1_714_564_800_123;
const body = Buffer.from('{"event":"paid","amount":42}\n');

hmac("signs POST, the path without query, unix seconds and the body hash", () => {
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "s3cret" }] });
  const headers = sign({ method: "POST", url: "https://hooks.example.com/in/orders?token=abc#frag", body, messageId: "evt_1", nowMs });
  assert.equal(Object.keys(headers), ["X-Spool-Signature", "X-Spool-Timestamp"]);
  assert.is(headers["X-Spool-Timestamp"], "1714564800");
  assert.is(headers["X-Spool-Signature"], expectedSpoolSignature("s3cret", "/in/orders", 1714564800, body));
  assert.match(headers["X-Spool-Signature"], /^[0-9a-f]{64}$/);
});

hmac("an empty path signs as /", () => {
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "k" }] });
  const headers = sign({ method: "POST", url: "https://example.com", body, messageId: "evt_1", nowMs });
  assert.is(headers["X-Spool-Signature"], expectedSpoolSignature("k", "/", 1714564800, body));
});

hmac("the path is signed as escaped on the request line", () => {
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "k" }] });
  const headers = sign({ method: "POST", url: "https://example.com/a b/ü", body, messageId: "evt_1", nowMs });
  assert.is(headers["X-Spool-Signature"], expectedSpoolSignature("k", "/a%20b/%C3%BC", 1714564800, body));
});

hmac("header names are configurable", () => {
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "k" }], signatureHeader: "X-Sig", timestampHeader: "X-Ts" });
  assert.equal(Object.keys(sign({ method: "POST", url: "https://e.com/x", body, messageId: "m", nowMs })), ["X-Sig", "X-Ts"]);
  assert.throws(() => createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "k" }], signatureHeader: "X-Same", timestampHeader: "x-same" }));
});

hmac.run();

const rotation = suite("secret rotation");
const old = { value: "old", validFromMs: 1_000, validUntilMs: 10_000 };
const current = { value: "current", validFromMs: 5_000, validUntilMs: 20_000 };
const future = { value: "future", validFromMs: 15_000 };

rotation("newest_valid picks the valid secret that became valid last", () => {
  assert.is(selectSecret([old, current, future], "newest_valid", 6_000).value, "current");
  assert.is(selectSecret([old, current, future], "newest_valid", 16_000).value, "future");
});

rotation("oldest_valid picks the valid secret that became valid first", () => {
  assert.is(selectSecret([old, current, future], "oldest_valid", 6_000).value, "old");
  assert.is(selectSecret([old, current, future], "oldest_valid", 16_000).value, "current");
});

rotation("valid_from is inclusive and valid_until exclusive", () => {
  assert.is(selectSecret([old, current], "newest_valid", 5_000).value, "current");
  assert.is(selectSecret([old, current], "oldest_valid", 10_000).value, "current");
  assert.is(selectSecret([old], "newest_valid", 1_000).value, "old");
});

rotation("no valid secret is an error, not a silent unsigned request", () => {
  assert.throws(() => selectSecret([old], "newest_valid", 10_000), (e: unknown) => e instanceof NoValidSecretError);
  assert.throws(() => selectSecret([future], "newest_valid", 0), (e: unknown) => e instanceof NoValidSecretError);
});

rotation("the signer uses the secret valid at signing time", () => {
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [old, current] });
  const headers = sign({ method: "POST", url: "https://e.com/p", body, messageId: "m", nowMs: 7_000 });
  assert.is(headers["X-Spool-Signature"], expectedSpoolSignature("current", "/p", 7, body));
  const oldest = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [old, current], selection: "oldest_valid" });
  assert.is(oldest({ method: "POST", url: "https://e.com/p", body, messageId: "m", nowMs: 7_000 })["X-Spool-Signature"], expectedSpoolSignature("old", "/p", 7, body));
});

rotation.run();

const standard = suite("standard webhooks signing");
const keyBytes = Buffer.from("0123456789abcdef0123456789abcdef");
const whsec = `whsec_${keyBytes.toString("base64")}`;

standard("signs id.timestamp.body with the base64-decoded key", () => {
  const sign = createSigner({ ...WEBHOOKS_SIGNING, mode: "standard_webhooks", secrets: [{ value: whsec }] });
  const headers = sign({ method: "POST", url: "https://e.com/p", body, messageId: "evt_42", nowMs });
  const expected = createHmac("sha256", keyBytes).update(Buffer.concat([Buffer.from("evt_42.1714564800."), body])).digest("base64");
  assert.equal(headers, { "webhook-id": "evt_42", "webhook-timestamp": "1714564800", "webhook-signature": `v1,${expected}` });
});

standard("the whsec_ prefix is optional", () => {
  assert.equal(decodeStandardWebhooksSecret(whsec), keyBytes);
  assert.equal(decodeStandardWebhooksSecret(keyBytes.toString("base64")), keyBytes);
});

standard("a secret that is not base64 is refused when the signer is built", () => {
  assert.throws(() => createSigner({ ...WEBHOOKS_SIGNING, mode: "standard_webhooks", secrets: [{ value: "whsec_not base64!" }] }));
});

standard.run();

const fileSecrets = suite("file: signing secrets are read again");
const temp = makeTempDir("sign-file");
fileSecrets.after(() => temp.cleanup());

fileSecrets("an hmac secret file rewritten is used once the last read is FILE_SECRET_REFRESH_MS old; an emptied one keeps the last value", () => {
  const file = join(temp.path, "hmac-secret");
  writeFileSync(file, "first\n");
  const sign = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "first", file }] });
  const signatureAt = (atMs: number) => sign({ method: "POST", url: "https://e.com/x", body, messageId: "m", nowMs: atMs })["X-Spool-Signature"];
  const expected = (secret: string, atMs: number) => expectedSpoolSignature(secret, "/x", Math.floor(atMs / 1000), body);
  assert.is(signatureAt(nowMs), expected("first", nowMs));
  writeFileSync(file, "second\n");
  const early = nowMs + FILE_SECRET_REFRESH_MS - 1;
  assert.is(signatureAt(early), expected("first", early), "not read again before the refresh interval");
  const due = nowMs + FILE_SECRET_REFRESH_MS;
  assert.is(signatureAt(due), expected("second", due), "read again (and trimmed) once due");
  writeFileSync(file, "");
  const later = due + FILE_SECRET_REFRESH_MS;
  assert.is(signatureAt(later), expected("second", later), "an emptied file keeps the last good secret");
});

fileSecrets("a standard_webhooks key file rewritten with a malformed key keeps the last good key", () => {
  const file = join(temp.path, "sw-key");
  const first = Buffer.from("first key").toString("base64");
  const second = Buffer.from("second key").toString("base64");
  writeFileSync(file, `whsec_${first}`);
  const sign = createSigner({ ...WEBHOOKS_SIGNING, mode: "standard_webhooks", secrets: [{ value: `whsec_${first}`, file }] });
  const signatureAt = (atMs: number) => sign({ method: "POST", url: "https://e.com/x", body, messageId: "msg_1", nowMs: atMs })["webhook-signature"];
  const expected = (key: string, atMs: number) =>
    `v1,${createHmac("sha256", Buffer.from(key, "base64")).update(`msg_1.${Math.floor(atMs / 1000)}.`).update(body).digest("base64")}`;
  assert.is(signatureAt(nowMs), expected(first, nowMs));
  writeFileSync(file, "not base64!");
  const due = nowMs + FILE_SECRET_REFRESH_MS;
  assert.is(signatureAt(due), expected(first, due), "a malformed key is not taken");
  writeFileSync(file, `whsec_${second}`);
  const next = due + FILE_SECRET_REFRESH_MS;
  assert.is(signatureAt(next), expected(second, next));
});

fileSecrets.run();
