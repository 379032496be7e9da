import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { directivesIn } from "../../compiler/reference.js";
import { repoPath } from "../helpers/repo.js";

// The VS Code extension's TextMate grammar (editors/vscode/syntaxes/spoolfile.tmLanguage.json),
// run by the engine VS Code runs it with: vscode-textmate on the Oniguruma regex library.
const require = createRequire(import.meta.url);
const textmate = require("vscode-textmate") as typeof import("vscode-textmate");
const oniguruma = require("vscode-oniguruma") as typeof import("vscode-oniguruma");

const grammarPath = repoPath("editors", "vscode", "syntaxes", "spoolfile.tmLanguage.json");
const grammarJson = readFileSync(grammarPath, "utf8");

async function loadGrammar(): Promise<import("vscode-textmate").IGrammar> {
  const wasm = readFileSync(join(require.resolve("vscode-oniguruma"), "..", "onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({ createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns), createOnigString: (text) => new oniguruma.OnigString(text) }),
    loadGrammar: async (scopeName) => (scopeName === "source.spoolfile" ? textmate.parseRawGrammar(grammarJson, grammarPath) : null),
  });
  const grammar = await registry.loadGrammar("source.spoolfile");
  if (!grammar) throw new Error("the grammar did not load");
  return grammar;
}

interface Token {
  text: string;
  scopes: string[];
  line: number;
}

/** Tokens of every line; a line the engine had to stop early on is an error (the grammar looped). */
function tokenize(grammar: import("vscode-textmate").IGrammar, text: string): Token[] {
  const tokens: Token[] = [];
  let state = textmate.INITIAL;
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    const result = grammar.tokenizeLine(line, state, 1000);
    if (result.stoppedEarly) throw new Error(`line ${index + 1}: tokenizing stopped early`);
    for (const t of result.tokens) tokens.push({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes, line: index + 1 });
    state = result.ruleStack;
  });
  return tokens;
}

const GOLDEN = `# A comment, with "quotes" and {braces}
ingress {
  listen :8080 # trailing comment
}
pull_api { max_wait 30s; max_lease_ttl 1h30m; auth token env:PULL_TOKEN }
defaults { max_body 2mb; max_headers 64kb }
vars { HOST hooks.example.com }
@json { header "Content-Type" "application/json" }
/hooks/github {
  match @json
  auth hmac { provider github; secret file:/run/secrets/gh }
  deliver "https://{vars.HOST}/in\\t\\"x\\"" { timeout 5s; header "X-Env" "{env.STAGE}" }
  pull { path /p; auth token raw:{$TOKEN:dev-token} }
  publish off
  deliver_concurrency 4
}
internal /jobs { pull { path /jobs } }
`;

/** The first token with exactly this text (on `line` when given) and its scopes. */
function scopesOf(tokens: readonly Token[], text: string, line?: number): string[] {
  const token = tokens.find((t) => t.text === text && (line === undefined || t.line === line));
  if (!token) throw new Error(`no token ${JSON.stringify(text)}${line ? ` on line ${line}` : ""}: ${tokens.filter((t) => line === undefined || t.line === line).map((t) => JSON.stringify(t.text)).join(" ")}`);
  return token.scopes;
}

const grammarSuite = suite("TextMate grammar");
let grammar: import("vscode-textmate").IGrammar;
grammarSuite.before(async () => {
  grammar = await loadGrammar();
});

grammarSuite("scopes of the golden sample: comments, strings, escapes, placeholders, secret sources, numbers, names", () => {
  const tokens = tokenize(grammar, GOLDEN);
  const has = (text: string, scope: string, line?: number) => assert.ok(scopesOf(tokens, text, line).includes(scope), `${JSON.stringify(text)}: ${scopesOf(tokens, text, line).join(" ")} lacks ${scope}`);
  has('# A comment, with "quotes" and {braces}', "comment.line.number-sign.spoolfile");
  has("# trailing comment", "comment.line.number-sign.spoolfile");
  has("ingress", "entity.name.section.block.spoolfile");
  has("pull_api", "entity.name.section.block.spoolfile");
  has("listen", "keyword.other.directive.spoolfile");
  has("max_lease_ttl", "keyword.other.directive.spoolfile");
  has("provider", "keyword.other.directive.spoolfile");
  has("deliver_concurrency", "keyword.other.directive.spoolfile");
  has("30s", "constant.numeric.duration.spoolfile");
  has("1h30m", "constant.numeric.duration.spoolfile");
  has("5s", "constant.numeric.duration.spoolfile");
  has("2mb", "constant.numeric.size.spoolfile");
  has("64kb", "constant.numeric.size.spoolfile");
  has("4", "constant.numeric.spoolfile");
  has("off", "constant.language.boolean.spoolfile");
  has("env", "storage.type.secret-source.spoolfile", 5);
  has("file", "storage.type.secret-source.spoolfile", 11);
  has("raw", "storage.type.secret-source.spoolfile", 13);
  has("HOST", "variable.other.vars.spoolfile", 12);
  has("STAGE", "variable.other.env.spoolfile");
  has("TOKEN", "variable.other.env.spoolfile");
  has("dev-token", "string.unquoted.default.spoolfile");
  has("\\t", "constant.character.escape.spoolfile");
  has('\\"', "constant.character.escape.spoolfile");
  has("/in", "string.quoted.double.spoolfile");
  has("Content-Type", "string.quoted.double.spoolfile");
  has("/hooks/github", "entity.name.function.route.spoolfile");
  has("/jobs", "entity.name.function.route.spoolfile", 17);
  has("internal", "storage.modifier.channel.spoolfile");
  has("@json", "entity.name.type.matcher.spoolfile", 8);
  has("@json", "variable.other.matcher.spoolfile", 10);
  // A placeholder inside a string is a placeholder; a comment sign inside a string is not a comment.
  assert.ok(scopesOf(tokens, "HOST", 12).includes("string.quoted.double.spoolfile"));
  assert.not.ok(tokens.some((t) => t.line === 8 && t.scopes.some((s) => s.startsWith("comment"))));
});

grammarSuite("every top-level block of the directive table is highlighted as a block", () => {
  const names = directivesIn("top").map((r) => r.name).filter((n) => !["inbound", "outbound", "internal"].includes(n));
  for (const name of names) assert.ok(scopesOf(tokenize(grammar, `${name} { }`), name).includes("entity.name.section.block.spoolfile"), name);
});

grammarSuite("every file in fixtures/ tokenizes to the end, every character in a token", () => {
  const files: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) visit(path);
      else files.push(path);
    }
  };
  visit(repoPath("fixtures"));
  assert.ok(files.length > 100);
  for (const file of [...files, repoPath("Spoolfile")]) {
    const text = readFileSync(file, "utf8");
    let tokens: Token[];
    try {
      tokens = tokenize(grammar, text);
    } catch (error) {
      throw new Error(`${relative(repoPath(), file)}: ${(error as Error).message}`);
    }
    assert.is(tokens.map((t) => t.text).join(""), text.split(/\r\n|\r|\n/).join(""), relative(repoPath(), file));
  }
});

grammarSuite.run();
