// The release's file names and the attestation formats: one definition shared by the verifier
// (`spool verify-release`) and the release script (scripts/release/), so what the pipeline makes is
// what the verifier checks (docs/releases.md).

/** The DSSE payload type of an in-toto statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
/** The in-toto statement's `_type`. */
export const IN_TOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
/** The predicate types of the two attestations. */
export const SLSA_PROVENANCE_PREDICATE = "https://slsa.dev/provenance/v1";
export const SPDX_DOCUMENT_PREDICATE = "https://spdx.dev/Document/v2.3";

/** How the verifier recognises each file among the checksums entries and in the base dir. */
export const SBOM_SUFFIX = "_sbom.spdx.json";
export const PROVENANCE_SUFFIXES = ["_provenance.intoto.jsonl", "_provenance.attestation.json"] as const;
export const SBOM_ATTESTATION_SUFFIXES = ["_sbom.intoto.jsonl", "_sbom.attestation.json"] as const;

/** The names of a release's files for version `v` (X.Y.Z, no leading v). */
export function releaseFileNames(v: string) {
  const checksums = `spool_${v}_checksums.txt`;
  return {
    tarball: `spool-${v}.tgz`,
    sbom: `spool_${v}${SBOM_SUFFIX}`,
    checksums,
    signature: `${checksums}.sig`,
    publicKey: `${checksums}.pub.pem`,
    provenance: `spool_${v}${PROVENANCE_SUFFIXES[0]}`,
    sbomAttestation: `spool_${v}${SBOM_ATTESTATION_SUFFIXES[0]}`,
  };
}

/** Keep's single executables, named as the Keep CI action downloads them (keep/README.md). */
export const KEEP_ASSETS = ["keep-linux-amd64", "keep-linux-arm64"] as const;
