import { chmodSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, replaceFileAtomically, setRouteLabels, writeFileAtomically } from "../../compiler/index.js";
import { commentTexts, parseSpoolfile } from "../../grammar/index.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const original = `# Managed by the platform team.
pull_api { auth token raw:t }   # global token

/billing {
  # who owns this route
  application "billing"   # team label
  endpoint_name "invoices"
  pull { path /billing }
}

/orders {
  # no labels yet
  pull { path /orders }
}

/oneline { pull { path /oneline } }

internal {
  /jobs/a { pull { path /a } }
}
`;

const edit = suite("compiler edit API: labels are spliced, everything else is byte-identical");

function lineDiff(before: string, after: string): { removed: string[]; added: string[] } {
  const a = before.split("\n");
  const b = after.split("\n");
  return { removed: a.filter((l) => !b.includes(l)), added: b.filter((l) => !a.includes(l)) };
}

edit("setting labels on an unlabelled route adds exactly two lines, indented like the block", () => {
  const result = setRouteLabels(original, "Spoolfile", "/orders", { application: "shop", endpointName: "orders" });
  assert.ok(result.ok);
  if (!result.ok) return;
  assert.equal(lineDiff(original, result.text), { removed: [], added: ['  application "shop"', '  endpoint_name "orders"'] });
  const route = result.config.routes.find((r) => r.path === "/orders")!;
  assert.equal([route.application, route.endpointName], ["shop", "orders"]);
  assert.equal(commentTexts(parseSpoolfile(result.text).tree.items), commentTexts(parseSpoolfile(original).tree.items));
});

edit("a route whose path is written with placeholders is found by its expanded path; the written path stays", () => {
  const text = `pull_api { auth token raw:t }
vars { P hooks }
/{vars.P}/labelled { application "x"; endpoint_name "y"; pull { path /l } }
internal {
  /{vars.P}/plain { pull { path /p } }
}
`;
  const added = setRouteLabels(text, "Spoolfile", "/hooks/plain", { application: "x", endpointName: "z" });
  assert.ok(added.ok, JSON.stringify(!added.ok && added.diagnostics));
  if (!added.ok) return;
  assert.is(added.text, text.replace("/{vars.P}/plain { pull", '/{vars.P}/plain { application "x"; endpoint_name "z"; pull'));
  const removed = setRouteLabels(text, "Spoolfile", "/hooks/labelled", null);
  assert.ok(removed.ok, JSON.stringify(!removed.ok && removed.diagnostics));
  if (!removed.ok) return;
  assert.equal([removed.config.routes[0].path, removed.config.routes[0].application], ["/hooks/labelled", null]);
  assert.ok(removed.text.includes("/{vars.P}/labelled {"));
});

edit("changing existing labels replaces only their values and keeps end-of-line comments", () => {
  const result = setRouteLabels(original, "Spoolfile", "/billing", { application: "finance", endpointName: "invoices-v2" });
  assert.ok(result.ok);
  if (!result.ok) return;
  assert.is(result.text, original.replace('application "billing"', 'application "finance"').replace('endpoint_name "invoices"', 'endpoint_name "invoices-v2"'));
});

edit("removing labels deletes their statements and nothing else; a trailing comment stays", () => {
  const result = setRouteLabels(original, "Spoolfile", "/billing", null);
  assert.ok(result.ok);
  if (!result.ok) return;
  assert.is(result.text, original.replace('  application "billing"   # team label\n', "  # team label\n").replace('  endpoint_name "invoices"\n', ""));
  const route = result.config.routes.find((r) => r.path === "/billing")!;
  assert.equal([route.application, route.endpointName], [null, null]);
});

edit("a one-line route block gets its labels inline and stays valid", () => {
  const result = setRouteLabels(original, "Spoolfile", "/oneline", { application: "a", endpointName: "b" });
  assert.ok(result.ok);
  if (!result.ok) return;
  assert.match(result.text, '/oneline { application "a"; endpoint_name "b"; pull { path /oneline } }');
  assert.is(result.text.replace(' application "a"; endpoint_name "b";', ""), original);
});

edit("labels removed from a line they share leave no stray `;`, spaces or indentation behind", () => {
  const compact = `pull_api { auth token raw:t }
/s {
  application "x"; endpoint_name "y"  # both labels
  pull { path /s }
}
/t {
  pull { path /t }; application "x2"; endpoint_name "y2"
}
/u { pull { path /u }; application "x3"; endpoint_name "y3" }
/v {
  pull { path /v }; application "x4"; endpoint_name "y4";  # labelled
}
`;
  const expected: Record<string, string> = {
    "/s": compact.replace('application "x"; endpoint_name "y"  # both labels', "# both labels"),
    "/t": compact.replace('pull { path /t }; application "x2"; endpoint_name "y2"', "pull { path /t }"),
    "/u": compact.replace('/u { pull { path /u }; application "x3"; endpoint_name "y3" }', "/u { pull { path /u } }"),
    "/v": compact.replace('pull { path /v }; application "x4"; endpoint_name "y4";  # labelled', "pull { path /v } # labelled"),
  };
  for (const [route, text] of Object.entries(expected)) {
    const result = setRouteLabels(compact, "Spoolfile", route, null);
    assert.ok(result.ok, `${route}: ${JSON.stringify(!result.ok && result.diagnostics)}`);
    if (result.ok) assert.is(result.text, text, route);
  }
});

edit("routes inside a channel wrapper can be labelled", () => {
  const result = setRouteLabels(original, "Spoolfile", "/jobs/a", { application: "jobs", endpointName: "a" });
  assert.ok(result.ok);
  if (result.ok) assert.is(result.config.routes.find((r) => r.path === "/jobs/a")!.application, "jobs");
});

edit("an edit that would break validation is refused with diagnostics, not written", () => {
  const result = setRouteLabels(original, "Spoolfile", "/orders", { application: "billing", endpointName: "invoices" });
  assert.not.ok(result.ok);
  if (!result.ok) assert.match(result.diagnostics[0].message, /already mapped to route \/billing/);
});

edit("an unknown route is refused", () => {
  const result = setRouteLabels(original, "Spoolfile", "/nope", { application: "a", endpointName: "b" });
  assert.not.ok(result.ok);
});

edit("every edited result validates and reformats without changing the IR", () => {
  for (const path of ["/orders", "/billing", "/oneline", "/jobs/a"]) {
    const result = setRouteLabels(original, "Spoolfile", path, { application: "x", endpointName: path.replace(/\W/g, "") || "root" });
    assert.ok(result.ok, path);
    if (result.ok) assert.equal(compileSpoolfile(result.text, "Spoolfile").diagnostics.filter((d) => d.severity === "error"), []);
  }
});

edit("atomic write replaces the file and rollback restores the previous bytes exactly", async () => {
  const temp = makeTempDir("edit");
  const path = join(temp.path, "Spoolfile");
  const previous = Buffer.from("# crlf file\r\npull_api { auth token raw:t }\r\n\u00e9\n");
  writeFileSync(path, previous);
  const replacement = await replaceFileAtomically(path, "new content\n");
  assert.is(readFileSync(path, "utf8"), "new content\n");
  await replacement.rollback();
  assert.ok(readFileSync(path).equals(previous));
  await writeFileAtomically(path, "again\n");
  assert.is(readFileSync(path, "utf8"), "again\n");
  temp.cleanup();
});

edit("atomic write keeps the file's permission bits and, through a symlink, replaces the file it names", async () => {
  const temp = makeTempDir("edit-mode");
  const real = join(temp.path, "real-Spoolfile");
  writeFileSync(real, "old\n");
  chmodSync(real, 0o600);
  await writeFileAtomically(real, "private\n");
  assert.is(statSync(real).mode & 0o777, 0o600, "a 0600 file stays 0600");
  const link = join(temp.path, "Spoolfile");
  symlinkSync(real, link);
  await writeFileAtomically(link, "through the link\n");
  assert.ok(lstatSync(link).isSymbolicLink(), "the link stays a link");
  assert.is(readFileSync(real, "utf8"), "through the link\n", "the file it names is rewritten");
  assert.is(statSync(real).mode & 0o777, 0o600);
  temp.cleanup();
});

edit.run();
