import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ERROR_STATUS } from "../../runtime/errors.js";
import { repoPath } from "../helpers/repo.js";

// The catalogue is the "Error catalogue" section of docs/api.md, up to the next heading of its level.
const api = readFileSync(repoPath("docs/api.md"), "utf8");
const start = api.indexOf("\n## Error catalogue\n");
const end = start < 0 ? -1 : api.indexOf("\n## ", start + 1);
const table = start < 0 ? "" : api.slice(start, end < 0 ? undefined : end);

function documentedCodes(): Map<string, number> {
  assert.ok(table.length > 0, 'docs/api.md has a "## Error catalogue" section');
  const rows = new Map<string, number>();
  for (const line of table.split("\n")) {
    const m = /^\|\s*([a-z0-9_]+)\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|\s*$/.exec(line);
    if (!m) continue;
    assert.ok(!rows.has(m[1]), `${m[1]} is documented twice`);
    assert.ok(m[3].length > 0, `${m[1]} has a meaning`);
    rows.set(m[1], Number(m[2]));
  }
  return rows;
}

const doc = suite("error catalogue against the table in docs/api.md");

doc("every catalogue code is documented with its status", () => {
  const documented = documentedCodes();
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.is(documented.get(code), status, code);
  }
});

doc("the table documents no code the catalogue lacks", () => {
  const extra = [...documentedCodes().keys()].filter((code) => !Object.hasOwn(ERROR_STATUS, code));
  assert.equal(extra, []);
});

doc.run();
