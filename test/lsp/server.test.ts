import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import { directivesIn, referenceMarkdown } from "../../compiler/reference.js";
import { LspClient, type LspMessage } from "../helpers/lsp-client.js";
import { repoPath, spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

// `spool lsp` as an editor runs it: the built CLI as a child process, spoken to over stdio.
const temp = makeTempDir("lsp");
process.on("exit", () => temp.cleanup());

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface Diagnostic {
  range: Range;
  severity: number;
  code: string;
  message: string;
  data?: { suggestion?: string };
}
interface TextEdit {
  range: Range;
  newText: string;
}
interface Location {
  uri: string;
  range: Range;
}
interface Symbol {
  name: string;
  kind: number;
  range: Range;
  selectionRange: Range;
  children?: Symbol[];
}

const SECRET_ENV_VALUE = "env-value-never-shown-7Q";

function startServer(): LspClient {
  return new LspClient(process.execPath, [spoolBin, "lsp", "--stdio"], { env: { ...process.env, SIGNING_KEY: "k", SPOOL_LSP_TEST_SECRET: SECRET_ENV_VALUE } });
}

async function initialized(client: LspClient): Promise<{ capabilities: Record<string, unknown> }> {
  const result = await client.request<{ capabilities: Record<string, unknown> }>("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
  client.notify("initialized", {});
  return result;
}

function uriOf(name: string): string {
  return pathToFileURL(join(temp.path, name)).href;
}

function diagnosticsFor(client: LspClient, uri: string, version: number): Promise<Diagnostic[]> {
  return client
    .nextNotification((m) => m.method === "textDocument/publishDiagnostics" && (m.params as { uri: string; version?: number }).uri === uri && (m.params as { version?: number }).version === version, `diagnostics of ${uri} v${version}`)
    .then((m: LspMessage) => (m.params as { diagnostics: Diagnostic[] }).diagnostics);
}

function open(client: LspClient, uri: string, text: string): Promise<Diagnostic[]> {
  client.notify("textDocument/didOpen", { textDocument: { uri, languageId: "spoolfile", version: 1, text } });
  return diagnosticsFor(client, uri, 1);
}

/** The position of the `nth` occurrence of `needle` in `text`, moved `delta` characters. */
function at(text: string, needle: string, delta = 0, nth = 0): Position {
  let index = -1;
  for (let i = 0; i <= nth; i++) index = text.indexOf(needle, index + 1);
  if (index < 0) throw new Error(`${needle} not in the text`);
  const before = text.slice(0, index + delta).split("\n");
  return { line: before.length - 1, character: before[before.length - 1].length };
}

function applied(text: string, edits: TextEdit[]): string {
  return TextDocument.applyEdits(TextDocument.create("file:///x", "spoolfile", 1, text), edits);
}

const MAIN = `vars {
  HOST hooks.example.com
}

@json {
  header "Content-Type" "application/json"
}

secrets {
  secret "signing" {
    value env:SIGNING_KEY
  }
}

queue_limits {
  drop_policy reject
}

/hooks/a {
  match @json
  deliver "https://{vars.HOST}/in" {
    timeout 5s
    sign hmac secret_ref "signing"
  }
}

internal {
  /jobs/b {
    pull {
      path /b
      auth token env:SIGNING_KEY
    }
  }
}
`;

const lsp = suite("spool lsp");

lsp("initialize names every capability the server has", async () => {
  const client = startServer();
  const { capabilities } = await initialized(client);
  for (const name of ["documentFormattingProvider", "hoverProvider", "completionProvider", "definitionProvider", "referencesProvider", "documentSymbolProvider", "codeActionProvider"]) {
    assert.ok(capabilities[name], `${name} missing`);
  }
  assert.is(await client.close(), 0);
});

lsp("the server exits when the editor goes away: 1 without a shutdown request", async () => {
  const client = startServer();
  await initialized(client);
  assert.is(await client.endInput(), 1);
});

lsp("didOpen and didChange publish the compiler's diagnostics with ranges, codes and severities", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("diagnostics.spool");
  assert.equal(await open(client, uri, MAIN), []);
  // A misspelt directive, a wrong value of a closed set, and an unknown var, typed in.
  const broken = MAIN.replace("timeout 5s", "timout 5s").replace("drop_policy reject", "drop_policy rejectt").replace("{vars.HOST}", "{vars.HOTS}");
  client.notify("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text: broken }] });
  const diagnostics = await diagnosticsFor(client, uri, 2);
  const byCode = Object.fromEntries(diagnostics.map((d) => [d.code, d]));
  assert.equal(Object.keys(byCode).sort(), ["expected_enum", "unknown_directive", "unknown_reference"]);
  assert.equal(byCode.unknown_directive.range, { start: at(broken, "timout"), end: at(broken, "timout", "timout".length) });
  assert.equal(byCode.unknown_directive.data, { suggestion: "timeout" });
  assert.is(byCode.unknown_directive.severity, 1);
  assert.match(byCode.unknown_directive.message, /did you mean "timeout"/);
  assert.equal(byCode.expected_enum.range, { start: at(broken, "rejectt"), end: at(broken, "rejectt", 7) });
  assert.equal(byCode.expected_enum.data, { suggestion: "reject" });
  assert.equal(byCode.unknown_reference.range.start.line, at(broken, "{vars.HOTS}").line);
  // An incremental change: the fix of one line only.
  const fix = { range: { start: at(broken, "timout"), end: at(broken, "timout", 6) }, text: "timeout" };
  client.notify("textDocument/didChange", { textDocument: { uri, version: 3 }, contentChanges: [fix] });
  assert.equal((await diagnosticsFor(client, uri, 3)).map((d) => d.code).sort(), ["expected_enum", "unknown_reference"]);
  // A warning keeps its severity: an unset environment variable.
  const warned = MAIN.replace("env:SIGNING_KEY", "env:SPOOL_LSP_TEST_UNSET");
  client.notify("textDocument/didChange", { textDocument: { uri, version: 4 }, contentChanges: [{ text: warned }] });
  const warnings = await diagnosticsFor(client, uri, 4);
  assert.equal(warnings.map((d) => [d.code, d.severity]), [["env_unset", 2]]);
  assert.is(await client.close(), 0);
});

lsp("a syntax error is reported where it is, and the file is not formatted", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("broken.spool");
  const text = 'ingress {\n  listen "unterminated\n}\n';
  const diagnostics = await open(client, uri, text);
  assert.ok(diagnostics.some((d) => d.code === "unterminated_string" && d.range.start.line === 1), JSON.stringify(diagnostics));
  const edits = await client.request<TextEdit[]>("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
  assert.equal(edits, []);
  assert.is(await client.close(), 0);
});

lsp("formatting edits applied give spool config fmt's output: every fmt fixture, and the example Spoolfile", async () => {
  const client = startServer();
  await initialized(client);
  // The fmt fixtures' expected files are config fmt's output (test/grammar/golden.test.ts holds it to them).
  const dir = repoPath("fixtures", "config", "fmt");
  const inputs = readdirSync(dir).filter((f) => f.endsWith(".spool") && !f.endsWith(".expected.spool"));
  assert.ok(inputs.length > 10);
  const cases = inputs.map((name) => ({ name, text: readFileSync(join(dir, name), "utf8"), formatted: readFileSync(join(dir, name.replace(/\.spool$/, ".expected.spool")), "utf8") }));
  const messy = readFileSync(repoPath("Spoolfile"), "utf8").replace(/\n  /g, "\n\t  ").replace(/\n\n/g, "\n\n\n");
  writeFileSync(join(temp.path, "Spoolfile"), messy);
  const cli = spawnSync(process.execPath, [spoolBin, "config", "fmt", join(temp.path, "Spoolfile")], { encoding: "utf8" });
  assert.is(cli.status, 0, cli.stderr);
  cases.push({ name: "Spoolfile", text: messy, formatted: cli.stdout });
  for (const { name, text, formatted } of cases) {
    const uri = uriOf(name);
    await open(client, uri, text);
    const edits = await client.request<TextEdit[]>("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
    assert.is(applied(text, edits), formatted, name);
  }
  assert.is(await client.close(), 0);
});

lsp("hover on a directive shows its row of the directive table; elsewhere nothing", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("hover.spool");
  await open(client, uri, MAIN);
  const hover = await client.request<{ contents: { kind: string; value: string }; range: Range }>("textDocument/hover", { textDocument: { uri }, position: at(MAIN, "drop_policy", 3) });
  assert.is(hover.contents.kind, "markdown");
  assert.match(hover.contents.value, "`drop_policy reject|drop_oldest`");
  assert.match(hover.contents.value, "What a new message does at max_depth");
  assert.match(hover.contents.value, "Default: reject");
  assert.match(hover.contents.value, "Values: `reject`, `drop_oldest`");
  assert.ok(referenceMarkdown().includes("| `drop_policy reject\\|drop_oldest` | reject | reject, drop_oldest | What a new message does at max_depth |"), "hover and docs come from one row");
  assert.equal(hover.range, { start: at(MAIN, "drop_policy"), end: at(MAIN, "drop_policy", 11) });
  // The same word means different things in different blocks: timeout in deliver is the attempt's.
  const timeout = await client.request<{ contents: { value: string } }>("textDocument/hover", { textDocument: { uri }, position: at(MAIN, "timeout 5s", 1) });
  assert.match(timeout.contents.value, "Time one attempt may take");
  const sub = await client.request<{ contents: { value: string } }>("textDocument/hover", { textDocument: { uri }, position: at(MAIN, "auth token", 1) });
  assert.match(sub.contents.value, "`auth token <source>`");
  assert.is(await client.request("textDocument/hover", { textDocument: { uri }, position: at(MAIN, "hooks.example.com", 2) }), null);
  assert.is(await client.close(), 0);
});

lsp("completion offers the directives of the cursor's block, values of closed sets, and the file's names", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("completion.spool");
  const text = MAIN.replace("    timeout 5s\n", "    timeout 5s\n    \n").replace("  drop_policy reject\n", "  drop_policy reject\n  \n");
  await open(client, uri, text);
  const labels = async (position: Position) => (await client.request<{ label: string }[]>("textDocument/completion", { textDocument: { uri }, position })).map((i) => i.label).sort();
  const lineAfter = (needle: string, indent: number) => ({ line: at(text, needle).line + 1, character: indent });
  assert.equal(await labels(lineAfter("timeout 5s", 4)), ["header", "retry", "sign", "timeout"]);
  assert.equal(await labels(lineAfter("drop_policy reject", 2)), ["drop_policy", "max_depth"]);
  const top = await labels({ line: at(text, "/hooks/a").line - 1, character: 0 });
  assert.ok(top.includes("ingress") && top.includes("secrets") && !top.includes("listen"), top.join());
  const route = await labels(lineAfter("/hooks/a {", 2));
  assert.equal(route, [...new Set(directivesIn("route").map((r) => (r.sub ? `${r.name} ${r.sub}` : r.name)))].sort());
  // Values: after the directive's name, in the middle of a word too.
  assert.equal(await labels(at(text, "reject", 0)), ["drop_oldest", "reject"]);
  assert.equal(await labels(at(text, "reject", 3)), ["drop_oldest", "reject"]);
  const edited = text.replace("    timeout 5s\n    \n", "    timeout 5s\n    retry \n").replace("  drop_policy reject\n  \n", "  drop_policy reject\n  \n") + "/c {\n  queue \n  auth hmac {\n    provider \n  }\n  auth \n  match @\n  deliver \"https://{vars.\" {}\n  auth hmac secret_ref \"\n}\n";
  client.notify("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text: edited }] });
  await diagnosticsFor(client, uri, 2);
  const endOf = (needle: string) => at(edited, needle, needle.length);
  assert.equal(await labels(endOf("retry ")), ["exponential"]);
  assert.equal(await labels(endOf("queue ")), ["memory", "postgres", "sqlite"]);
  assert.equal(await labels(endOf("provider ")), ["cituro", "forgejo", "gitea", "github", "standard_webhooks", "stripe"]);
  assert.equal(await labels(endOf("\n  auth ")), ["basic", "forward", "hmac", "token"]);
  assert.equal(await labels(endOf("      auth ")), ["token"], "in pull, auth is auth token only");
  assert.equal(await labels(endOf("match @")), ["@json"]);
  assert.equal(await labels(endOf("{vars.")), ["HOST"]);
  assert.equal(await labels(endOf('secret_ref "')), ["signing"]);
  assert.is(await client.close(), 0);
});

lsp("definition and references for {vars.NAME}, named matchers and secret_ref", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("navigation.spool");
  const text = MAIN.replace("  match @json\n", "  match @json\n  application \"{vars.HOST}\"\n  endpoint_name \"a\"\n");
  await open(client, uri, text);
  const definitionAt = (position: Position) => client.request<Location[]>("textDocument/definition", { textDocument: { uri }, position });
  const referencesAt = (position: Position, includeDeclaration: boolean) => client.request<Location[]>("textDocument/references", { textDocument: { uri }, position, context: { includeDeclaration } });
  const rangeOf = (needle: string, delta: number, length: number, nth = 0) => ({ start: at(text, needle, delta, nth), end: at(text, needle, delta + length, nth) });

  assert.equal(await definitionAt(at(text, "{vars.HOST}", 7)), [{ uri, range: rangeOf("HOST hooks", 0, 4) }]);
  assert.equal((await referencesAt(at(text, "HOST hooks", 1), false)).map((l) => l.range), [rangeOf("{vars.HOST}", 6, 4, 0), rangeOf("{vars.HOST}", 6, 4, 1)]);
  assert.equal(await definitionAt(at(text, "match @json", 8)), [{ uri, range: rangeOf("@json {", 1, 4) }]);
  assert.equal((await referencesAt(at(text, "@json {", 2), true)).map((l) => l.range), [rangeOf("@json {", 1, 4), rangeOf("match @json", 7, 4)]);
  assert.equal(await definitionAt(at(text, 'secret_ref "signing"', 13)), [{ uri, range: rangeOf('secret "signing"', 8, 7) }]);
  assert.equal((await referencesAt(at(text, 'secret "signing"', 9), false)).map((l) => l.range), [rangeOf('secret_ref "signing"', 12, 7)]);
  assert.equal(await definitionAt(at(text, "drop_policy")), []);
  assert.is(await client.close(), 0);
});

lsp("document symbols outline the top-level blocks and routes, nested as written", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("symbols.spool");
  await open(client, uri, MAIN);
  const symbols = await client.request<Symbol[]>("textDocument/documentSymbol", { textDocument: { uri } });
  const outline = (list: Symbol[]): unknown[] => list.map((s) => (s.children && s.children.length > 0 ? [s.name, outline(s.children)] : s.name));
  assert.equal(outline(symbols), ["vars", "@json", ["secrets", ['secret "signing"']], "queue_limits", ["/hooks/a", ['deliver']], ["internal", [["/jobs/b", ["pull"]]]]]);
  const route = symbols.find((s) => s.name === "/hooks/a")!;
  assert.equal(route.selectionRange, { start: at(MAIN, "/hooks/a"), end: at(MAIN, "/hooks/a", 8) });
  assert.equal(route.range.end, at(MAIN, "}\n\ninternal", 1));
  assert.is(await client.close(), 0);
});

lsp("every did-you-mean has a quick fix that makes the diagnostic go away", async () => {
  const client = startServer();
  await initialized(client);
  const uri = uriOf("actions.spool");
  const text = MAIN.replace("timeout 5s", "timout 5s").replace("drop_policy reject", "drop_policy rejectt").replace("sign hmac", "sign hmca");
  const diagnostics = await open(client, uri, text);
  const suggested = diagnostics.filter((d) => d.data?.suggestion !== undefined);
  assert.is(suggested.length, 3, JSON.stringify(diagnostics));
  const actions = await client.request<{ title: string; kind: string; edit: { changes: Record<string, TextEdit[]> } }[]>("textDocument/codeAction", { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: at(text, "internal") }, context: { diagnostics } });
  assert.equal(actions.map((a) => a.title).sort(), ['Change to "hmac"', 'Change to "reject"', 'Change to "timeout"']);
  assert.ok(actions.every((a) => a.kind === "quickfix"));
  let fixed = text;
  for (const action of actions) fixed = applied(fixed, action.edit.changes[uri]);
  assert.is(fixed, MAIN);
  client.notify("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text: fixed }] });
  assert.equal(await diagnosticsFor(client, uri, 2), []);
  assert.is(await client.close(), 0);
});

lsp("a raw: secret, or a secret from the environment, never appears in any response", async () => {
  const secrets = ["raw-token-value-never-shown-1x", "raw-hmac-value-never-shown-2y", "raw-misplaced-never-shown-3z"];
  const text = `pull_api {
auth   token raw:${secrets[0]}
max_batch {env.SPOOL_LSP_TEST_SECRET}
}
/hooks/x {
    auth hmac {
   provider github
  secret raw:${secrets[1]}
    }
  pull { path /x }
  max_body raw:${secrets[2]}
  tmeout raw:${secrets[2]}
}
`;
  const client = startServer();
  await initialized(client);
  const uri = uriOf("secrets.spool");
  const diagnostics = await open(client, uri, text);
  assert.ok(diagnostics.some((d) => d.code === "expected_number") && diagnostics.some((d) => d.code === "expected_size") && diagnostics.some((d) => d.code === "unknown_directive"), JSON.stringify(diagnostics));
  const lines = text.split("\n");
  // Every word of the file: its first, second and last character and the position after it.
  const positions = lines.flatMap((lineText, line) => [...lineText.matchAll(/\S+/g)].flatMap((m) => [m.index!, m.index! + 1, m.index! + m[0].length - 1, m.index! + m[0].length].map((character) => ({ line, character }))));
  {
    for (const position of positions) {
      await client.request("textDocument/hover", { textDocument: { uri }, position });
      await client.request("textDocument/completion", { textDocument: { uri }, position });
      await client.request("textDocument/definition", { textDocument: { uri }, position });
      await client.request("textDocument/references", { textDocument: { uri }, position, context: { includeDeclaration: true } });
    }
  }
  await client.request("textDocument/documentSymbol", { textDocument: { uri } });
  await client.request("textDocument/codeAction", { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: lines.length, character: 0 } }, context: { diagnostics } });
  // Formatting changes the secrets' lines (indentation), yet sends only what changed in them.
  const edits = await client.request<TextEdit[]>("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
  assert.ok(edits.length > 0);
  const cli = spawnSync(process.execPath, [spoolBin, "config", "fmt"], { input: text, encoding: "utf8", cwd: temp.path });
  writeFileSync(join(temp.path, "secrets.spool"), text);
  const formatted = spawnSync(process.execPath, [spoolBin, "config", "fmt", join(temp.path, "secrets.spool")], { encoding: "utf8" });
  assert.is(applied(text, edits), formatted.stdout, cli.stderr);
  assert.is(await client.close(), 0);
  const everything = client.received.join("\n");
  for (const secret of [...secrets, SECRET_ENV_VALUE]) assert.not.ok(everything.includes(secret), `${secret} was sent to the editor`);
});

lsp.run();
