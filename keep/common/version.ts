import { readFileSync } from "node:fs";

/** Keep's version (`x.y.z`): the package version, read once from package.json beside dist/. */
export const keepVersion: string = (
  JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
