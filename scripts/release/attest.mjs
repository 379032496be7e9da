// The two attestations as in-toto DSSE envelopes (one JSON line each): SLSA v1 provenance and the
// SBOM attestation, both about the release's artifacts by SHA-256. The envelopes are unsigned: the
// signed checksums file is the trust anchor, and every subject must be one of its digests.
import { IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_TYPE, SLSA_PROVENANCE_PREDICATE, SPDX_DOCUMENT_PREDICATE } from "../../dist/cli/release/formats.js";

/** One DSSE envelope line holding the statement. */
function envelopeLine(subjects, predicateType, predicate) {
  const statement = { _type: IN_TOTO_STATEMENT_TYPE, subject: subjects.map((s) => ({ name: s.name, digest: { sha256: s.sha256 } })), predicateType, predicate };
  return `${JSON.stringify({ payloadType: IN_TOTO_PAYLOAD_TYPE, payload: Buffer.from(JSON.stringify(statement)).toString("base64"), signatures: [] })}\n`;
}

/**
 * SLSA v1 provenance. `build` holds what the script knows: the version, the commit, the source
 * repository, the builder (GitHub Actions' workflow run, or "local"), and when it ran.
 */
export function provenanceLine(subjects, build) {
  const env = process.env;
  const github = env.GITHUB_ACTIONS === "true" && env.GITHUB_REPOSITORY;
  const server = env.GITHUB_SERVER_URL ?? "https://github.com";
  const predicate = {
    buildDefinition: {
      buildType: "urn:spool:buildtype:npm-run-release:v1",
      externalParameters: { version: build.version, ref: env.GITHUB_REF ?? build.ref, workflow: env.GITHUB_WORKFLOW_REF },
      internalParameters: { node: process.version, npm: build.npmVersion, platform: `${process.platform}-${process.arch}`, sourceDateEpoch: build.epoch, keepBinaries: build.keepBinaries },
      resolvedDependencies: [{ uri: github ? `git+${server}/${env.GITHUB_REPOSITORY}@${env.GITHUB_REF}` : `git+${build.repository ?? "local"}`, digest: { gitCommit: build.commit } }],
    },
    runDetails: {
      builder: { id: github ? `${server}/${env.GITHUB_WORKFLOW_REF}` : "local:scripts/release/release.mjs" },
      metadata: {
        invocationId: github ? `${server}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}/attempts/${env.GITHUB_RUN_ATTEMPT}` : undefined,
        startedOn: build.startedOn,
        finishedOn: new Date().toISOString(),
      },
    },
  };
  return envelopeLine(subjects, SLSA_PROVENANCE_PREDICATE, predicate);
}

/** The SBOM attestation: the SPDX document as the predicate. */
export function sbomAttestationLine(subjects, sbom) {
  return envelopeLine(subjects, SPDX_DOCUMENT_PREDICATE, sbom);
}
