// `spool verify-release`: the six checks in order, the first failure ends the run
// (docs/releases.md, "What verify-release checks").
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { checkAttestation } from "./attestation.js";
import { entryPath, parseChecksums, verifyEntries, type ChecksumEntry } from "./checksums.js";
import { fail, readError } from "./failure.js";
import { PROVENANCE_SUFFIXES, SBOM_ATTESTATION_SUFFIXES, SBOM_SUFFIX, SLSA_PROVENANCE_PREDICATE, SPDX_DOCUMENT_PREDICATE } from "./formats.js";
import { checkSbom } from "./sbom.js";
import { ed25519PublicKey, verifySignature } from "./signature.js";

export interface VerifyOptions {
  readonly checksums: string;
  readonly baseDir?: string;
  readonly signature?: string;
  readonly publicKey?: string;
  readonly requireSignature?: boolean;
  readonly sbom?: string;
  readonly requireSbom?: boolean;
  readonly provenance?: string;
  readonly requireProvenance?: boolean;
  readonly sbomAttestation?: string;
}

/** What was verified; the file paths are absolute, and set only for the checks that ran. */
export interface VerifyResult {
  readonly checksumsFile: string;
  readonly baseDir: string;
  readonly artifacts: readonly ChecksumEntry[];
  readonly sbomFile?: string;
  readonly signatureFile?: string;
  readonly publicKeyFile?: string;
  readonly provenanceFile?: string;
  readonly sbomAttestationFile?: string;
}

function read(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    fail(`${what} "${path}" cannot be read: ${readError(error)}`);
  }
}

/** Runs the checks; throws ReleaseCheckFailed at the first that fails. Relative paths are the working directory's. */
export async function verifyRelease(o: VerifyOptions): Promise<VerifyResult> {
  const checksumsFile = resolve(o.checksums);
  const baseDir = resolve(o.baseDir ?? dirname(checksumsFile));

  // 1. Checksums.
  const checksumBytes = read(checksumsFile, "checksums file");
  const artifacts = parseChecksums(checksumBytes.toString("utf8"), checksumsFile);
  await verifyEntries(artifacts, baseDir);

  // 2. Which signature files, if any.
  if ((o.signature === undefined) !== (o.publicKey === undefined)) fail("--signature and --public-key must be given together");
  let signatureFile = o.signature === undefined ? undefined : resolve(o.signature);
  let publicKeyFile = o.publicKey === undefined ? undefined : resolve(o.publicKey);
  if (signatureFile === undefined && existsSync(`${checksumsFile}.sig`) && existsSync(`${checksumsFile}.pub.pem`)) {
    signatureFile = `${checksumsFile}.sig`;
    publicKeyFile = `${checksumsFile}.pub.pem`;
  }
  if (o.requireSignature && signatureFile === undefined) {
    fail(`--require-signature: no signature for "${checksumsFile}" (give --signature and --public-key, or put "${basename(checksumsFile)}.sig" and "${basename(checksumsFile)}.pub.pem" beside it)`);
  }

  // 3. SBOM.
  let sbomFile: string | undefined;
  if (o.sbom !== undefined) {
    sbomFile = resolve(o.sbom);
    const entry = artifacts.find((a) => basename(a.name) === basename(sbomFile!));
    if (!entry) fail(`sbom "${sbomFile}" is not listed in checksums file "${checksumsFile}"`);
    // Another file of the same name (elsewhere than the base dir) must have the listed digest too.
    if (sbomFile !== entryPath(entry, baseDir)) await verifyEntries([{ name: sbomFile, sha256: entry.sha256 }], baseDir);
  } else {
    const listed = artifacts.filter((a) => a.name.endsWith(SBOM_SUFFIX));
    if (listed.length > 1) fail(`several SBOMs listed in checksums file "${checksumsFile}": ${listed.map((a) => `"${a.name}"`).join(", ")} (pick one with --sbom)`);
    if (listed.length === 1) sbomFile = entryPath(listed[0], baseDir);
  }
  if (sbomFile !== undefined) checkSbom(read(sbomFile, "sbom").toString("utf8"), sbomFile);
  else if (o.requireSbom) fail(`--require-sbom: no checksums entry ends with "${SBOM_SUFFIX}" in "${checksumsFile}"`);

  // 4. Signature.
  if (signatureFile !== undefined && publicKeyFile !== undefined) {
    const key = ed25519PublicKey(read(publicKeyFile, "public key").toString("utf8"), publicKeyFile);
    verifySignature(checksumBytes, checksumsFile, read(signatureFile, "signature").toString("utf8"), signatureFile, key, publicKeyFile);
  }

  // 5 and 6. Attestations.
  const digests = new Set(artifacts.map((a) => a.sha256));
  const attestation = (given: string | undefined, suffixes: readonly string[], label: string, flag: string): string | undefined => {
    if (given !== undefined) return resolve(given);
    for (const suffix of suffixes) {
      const found = new Set<string>();
      for (const name of listDir(baseDir)) if (name.endsWith(suffix)) found.add(resolve(baseDir, name));
      for (const a of artifacts) if (a.name.endsWith(suffix)) found.add(entryPath(a, baseDir));
      if (found.size > 1) fail(`several ${label} files: ${[...found].map((f) => `"${f}"`).join(", ")} (pick one with ${flag})`);
      if (found.size === 1) return [...found][0];
    }
    return undefined;
  };
  const provenanceFile = attestation(o.provenance, PROVENANCE_SUFFIXES, "provenance", "--provenance");
  if (provenanceFile !== undefined) checkAttestation(read(provenanceFile, "provenance").toString("utf8"), provenanceFile, "provenance", SLSA_PROVENANCE_PREDICATE, digests);
  else if (o.requireProvenance) fail(`--require-provenance: no file ending "${PROVENANCE_SUFFIXES.join('" or "')}" in "${baseDir}" or the checksums`);
  const sbomAttestationFile = attestation(o.sbomAttestation, SBOM_ATTESTATION_SUFFIXES, "sbom-attestation", "--sbom-attestation");
  if (sbomAttestationFile !== undefined) {
    checkAttestation(read(sbomAttestationFile, "sbom-attestation").toString("utf8"), sbomAttestationFile, "sbom-attestation", SPDX_DOCUMENT_PREDICATE, digests);
  }

  return { checksumsFile, baseDir, artifacts, sbomFile, signatureFile, publicKeyFile, provenanceFile, sbomAttestationFile };
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (error) {
    fail(`base dir "${dir}" cannot be read: ${readError(error)}`);
  }
}

/** The five lines printed on success. */
export function resultLines(r: VerifyResult): string[] {
  const via = (label: string, file: string | undefined, how = "verified") => (file === undefined ? `${label}: not verified` : `${label}: ${how} via ${file}`);
  return [
    `verified ${r.artifacts.length} artifact(s) using ${r.checksumsFile}`,
    via("sbom", r.sbomFile),
    via("signature", r.publicKeyFile, "verified (ed25519)"),
    via("provenance", r.provenanceFile),
    via("sbom-attestation", r.sbomAttestationFile),
  ];
}

/** The one-line JSON: optional keys only for the checks that ran. */
export function resultJson(r: VerifyResult): string {
  const signed = r.signatureFile !== undefined;
  return JSON.stringify({
    checksums_file: r.checksumsFile,
    base_dir: r.baseDir,
    artifact_count: r.artifacts.length,
    artifacts: r.artifacts.map((a) => ({ name: a.name, sha256: a.sha256 })),
    sbom_verified: r.sbomFile !== undefined,
    sbom_file: r.sbomFile,
    signature_verified: signed,
    signature_file: r.signatureFile,
    public_key_file: r.publicKeyFile,
    signature_algorithm: signed ? "ed25519" : undefined,
    provenance_verified: r.provenanceFile !== undefined,
    provenance_file: r.provenanceFile,
    sbom_attest_verified: r.sbomAttestationFile !== undefined,
    sbom_attest_file: r.sbomAttestationFile,
  });
}
