// Steps 5 and 6: an attestation file is one JSON document or JSON lines (each non-empty line a
// document); a document is a Sigstore bundle ({mediaType?, dsseEnvelope}) or a bare DSSE envelope
// whose payload is an in-toto statement about artifacts listed in the checksums. DSSE signatures
// are not verified: the checksums signature is the trust anchor (docs/releases.md).
import { IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_TYPE } from "./formats.js";
import { fail } from "./failure.js";
import { isObject, STANDARD_BASE64, type Json } from "./shapes.js";

/** The documents of an attestation file, each with the line it starts on (1 for a single document). */
function documents(text: string, bad: (where: string, rule: string) => never): { line: number; doc: unknown }[] {
  if (text.trim() === "") bad("", "is empty");
  try {
    return [{ line: 1, doc: JSON.parse(text) }];
  } catch {
    // not one document: JSON lines
  }
  const docs: { line: number; doc: unknown }[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      docs.push({ line: i + 1, doc: JSON.parse(line) });
    } catch (error) {
      bad(` line ${i + 1}`, `is not JSON (${(error as Error).message})`);
    }
  }
  return docs;
}

/**
 * Checks every document of an attestation file (`label` is "provenance" or "sbom-attestation"):
 * payload type, statement type, the expected predicate type, and subjects whose SHA-256 digests
 * are all among `digests` (lowercase hex from the checksums).
 */
export function checkAttestation(text: string, file: string, label: string, predicateType: string, digests: ReadonlySet<string>): void {
  const bad: (where: string, rule: string) => never = (where, rule) => fail(`${label} "${file}"${where}: ${rule}`);
  for (const { line, doc } of documents(text, bad)) {
    const where = ` line ${line}`;
    if (!isObject(doc)) bad(where, "is not a JSON object");
    const envelope = isObject(doc.dsseEnvelope) ? doc.dsseEnvelope : doc;
    if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
      bad(where, `payloadType must be "${IN_TOTO_PAYLOAD_TYPE}" (got ${JSON.stringify(envelope.payloadType ?? null)})`);
    }
    if (typeof envelope.payload !== "string" || envelope.payload === "" || !STANDARD_BASE64.test(envelope.payload)) bad(where, "payload must be standard base64");
    let statement: unknown;
    try {
      statement = JSON.parse(Buffer.from(envelope.payload as string, "base64").toString("utf8"));
    } catch {
      bad(where, "payload is not a JSON in-toto statement");
    }
    if (!isObject(statement)) bad(where, "payload is not a JSON in-toto statement");
    const s = statement as Json;
    if (s._type !== IN_TOTO_STATEMENT_TYPE) bad(where, `statement _type must be "${IN_TOTO_STATEMENT_TYPE}" (got ${JSON.stringify(s._type ?? null)})`);
    if (s.predicateType !== predicateType) bad(where, `predicateType must be "${predicateType}" (got ${JSON.stringify(s.predicateType ?? null)})`);
    if (!Array.isArray(s.subject) || s.subject.length === 0) bad(where, "subject must be a non-empty list");
    for (const [i, subject] of (s.subject as unknown[]).entries()) {
      const sha = isObject(subject) && isObject(subject.digest) ? subject.digest.sha256 : undefined;
      const name = isObject(subject) && typeof subject.name === "string" ? ` "${subject.name}"` : "";
      if (typeof sha !== "string") bad(where, `subject[${i}]${name} has no digest.sha256`);
      if (!digests.has(sha.toLowerCase())) bad(where, `subject[${i}]${name} sha256 ${sha} is not listed in the checksums`);
    }
  }
}
