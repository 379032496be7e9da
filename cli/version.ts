import { readFileSync } from "node:fs";

/** The package version (`x.y.z`), read once from package.json next to the build output. */
export const spoolVersion: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
