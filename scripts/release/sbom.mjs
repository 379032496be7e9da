// The SPDX 2.3 SBOM: npm's own (`npm sbom --sbom-format spdx`, from package-lock.json, runtime
// dependencies only), then made the release's: the root package is the released application at
// the release's version with the tarball's checksum, Keep's executables are described beside it,
// and the creation time and namespace come from the commit, not the clock, so the same commit
// gives the same document.
import { createHash } from "node:crypto";
import { npm } from "./run.mjs";

/**
 * @param {string} root the repository
 * @param {string} version X.Y.Z
 * @param {{name: string, sha256: string}} tarball
 * @param {{name: string, sha256: string}[]} executables Keep's single executables
 * @param {number} epoch SOURCE_DATE_EPOCH (seconds)
 */
export function releaseSbom(root, version, tarball, executables, epoch) {
  const doc = JSON.parse(npm(["sbom", "--sbom-format", "spdx", "--omit", "dev", "--package-lock-only"], root));
  const rootId = doc.documentDescribes?.[0];
  const main = doc.packages.find((p) => p.SPDXID === rootId);
  if (!main) throw new Error("npm sbom described no root package");
  const id = `SPDXRef-Package-${main.name}-${version}`;
  const rename = (ref) => (ref === rootId ? id : ref);
  Object.assign(main, {
    SPDXID: id,
    versionInfo: version,
    packageFileName: tarball.name,
    primaryPackagePurpose: "APPLICATION",
    checksums: [{ algorithm: "SHA256", checksumValue: tarball.sha256 }],
    externalRefs: [{ referenceCategory: "PACKAGE-MANAGER", referenceType: "purl", referenceLocator: `pkg:npm/${main.name}@${version}` }],
  });
  const described = [id];
  for (const exe of executables) {
    const exeId = `SPDXRef-Package-${exe.name}-${version}`;
    described.push(exeId);
    doc.packages.push({
      name: exe.name,
      SPDXID: exeId,
      versionInfo: version,
      packageFileName: exe.name,
      description: "Keep's consumer commands (fetch, exec, version) as a Node.js single executable",
      primaryPackagePurpose: "APPLICATION",
      downloadLocation: "NOASSERTION",
      filesAnalyzed: false,
      licenseDeclared: main.licenseDeclared ?? "NOASSERTION",
      checksums: [{ algorithm: "SHA256", checksumValue: exe.sha256 }],
    });
  }
  doc.relationships = doc.relationships.map((r) => ({ ...r, spdxElementId: rename(r.spdxElementId), relatedSpdxElement: rename(r.relatedSpdxElement) }));
  for (const exeId of described.slice(1)) doc.relationships.push({ spdxElementId: "SPDXRef-DOCUMENT", relatedSpdxElement: exeId, relationshipType: "DESCRIBES" });
  doc.documentDescribes = described;
  doc.name = `${main.name}-${version}`;
  doc.creationInfo = { ...doc.creationInfo, created: new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") };
  doc.documentNamespace = "";
  const digest = createHash("sha256").update(JSON.stringify(doc)).digest("hex");
  doc.documentNamespace = `https://spdx.org/spdxdocs/${doc.name}-${digest.slice(0, 32)}`;
  return doc;
}
