// Step 3: the SPDX 2.3 JSON SBOM's shape.
import { fail } from "./failure.js";
import { isObject, nonEmptyString, type Json } from "./shapes.js";

/** Fails naming the file and the first rule the document breaks. */
export function checkSbom(text: string, file: string): void {
  const bad: (rule: string) => never = (rule) => fail(`sbom "${file}": ${rule}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    bad(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(doc)) bad("not a JSON object");
  const d = doc as Json;
  if (d.spdxVersion !== "SPDX-2.3") bad(`spdxVersion must be "SPDX-2.3" (got ${JSON.stringify(d.spdxVersion ?? null)})`);
  if (d.dataLicense !== "CC0-1.0") bad(`dataLicense must be "CC0-1.0" (got ${JSON.stringify(d.dataLicense ?? null)})`);
  if (!nonEmptyString(d.documentNamespace)) bad("documentNamespace must be a non-empty string");
  if (!Array.isArray(d.packages) || d.packages.length === 0) bad("packages must be a non-empty list");
  const ids = new Set<string>();
  for (const [i, p] of (d.packages as unknown[]).entries()) {
    if (!isObject(p) || !nonEmptyString(p.SPDXID) || !nonEmptyString(p.name)) bad(`packages[${i}] needs an SPDXID and a name`);
    ids.add((p as Json).SPDXID as string);
  }
  const packages = d.packages as Json[];
  if (!packages.some((p) => typeof p.primaryPackagePurpose === "string" && p.primaryPackagePurpose.toUpperCase() === "APPLICATION")) {
    bad(`no package has primaryPackagePurpose "APPLICATION"`);
  }
  if (!Array.isArray(d.documentDescribes) || d.documentDescribes.length === 0) bad("documentDescribes must be a non-empty list");
  for (const id of d.documentDescribes as unknown[]) {
    if (typeof id !== "string" || !ids.has(id)) bad(`documentDescribes names ${JSON.stringify(id)}, which is not a package's SPDXID`);
  }
}
