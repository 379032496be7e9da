// Behaviour of the Spoolfile lexer and parser (docs/decisions.md D2, docs/spoolfile.md
// "Syntax"): where statements end, what a token is, how strings decode, where comments and blank lines
// go, the positions the diagnostics and the editor rely on, and that every syntax error is reported.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  decodeSpoolfileBytes,
  directivesOf,
  MAX_BLOCK_DEPTH,
  parseSpoolfile,
  renderDiagnostic,
  sortDiagnostics,
  type Arg,
  type Directive,
  type Item,
} from "../../grammar/index.js";
import { spoolLexer } from "../../grammar/tokens.js";

function parseClean(text: string): readonly Item[] {
  const result = parseSpoolfile(text, "t.spool");
  assert.equal(result.diagnostics.map(renderDiagnostic), [], `unexpected diagnostics for ${JSON.stringify(text)}`);
  return result.tree.items;
}

/** Each directive as `name arg arg` (decoded values), nested blocks as child arrays. */
function heads(items: readonly Item[]): unknown[] {
  return directivesOf(items).map((d) => {
    const head = [d.name, ...d.args].filter((a): a is Arg => a !== null).map((a) => a.value).join(" ");
    return d.block ? [head, heads(d.block.items)] : head;
  });
}

function only(items: readonly Item[]): Directive {
  const directives = directivesOf(items);
  assert.is(directives.length, 1);
  return directives[0];
}

function tokenImages(text: string): string[] {
  return spoolLexer.tokenize(text).tokens.map((t) => `${t.tokenType.name}:${t.image}`);
}

function renderedErrors(text: string): string[] {
  return sortDiagnostics(parseSpoolfile(text, "t.spool").diagnostics).map(renderDiagnostic);
}

const statements = suite("statement boundaries");

statements("a statement ends at a newline", () => {
  assert.equal(heads(parseClean("listen :8080\nprefix /pull\n")), ["listen :8080", "prefix /pull"]);
});

statements("a statement ends at ';'", () => {
  assert.equal(heads(parseClean("listen :8080; prefix /pull;max_wait 30s")), ["listen :8080", "prefix /pull", "max_wait 30s"]);
});

statements("a statement ends at the '}' that closes its block", () => {
  assert.equal(heads(parseClean("pull { path /github; auth token env:T }")), [["pull", ["path /github", "auth token env:T"]]]);
});

statements("a one-line block nests one-line blocks", () => {
  assert.equal(heads(parseClean("ingress { listen :8080; rate_limit { rps 50; burst 100 } }")), [
    ["ingress", ["listen :8080", ["rate_limit", ["rps 50", "burst 100"]]]],
  ]);
});

statements("a statement after '}' on the same line is a new statement", () => {
  assert.equal(heads(parseClean("/a { pull { path /a } max_body 1mb }\n")), [["/a", [["pull", ["path /a"]], "max_body 1mb"]]]);
  assert.equal(heads(parseClean("ingress { listen :1 } pull_api { listen :2 }")), [["ingress", ["listen :1"]], ["pull_api", ["listen :2"]]]);
});

statements("empty statements between semicolons and newlines are nothing", () => {
  assert.equal(heads(parseClean(";;\n; a;;\n;")), ["a"]);
});

statements("a block opens only on its statement's line", () => {
  const result = parseSpoolfile("ingress\n{ listen :8080 }\n", "t.spool");
  assert.equal(result.diagnostics.map(renderDiagnostic), ['t.spool:2:1: expected a directive name before "{"']);
  assert.equal(heads(result.tree.items), ["ingress", ["", ["listen :8080"]]]);
});

statements("an empty file and a file of blank lines have no statements and no errors", () => {
  assert.equal(parseClean(""), []);
  assert.equal(heads(parseClean("\n\n  \t\n")), []);
});

const tokens = suite("tokens");

tokens("'{' and '}' stand alone: '{listen x}' is a block of three tokens", () => {
  assert.equal(tokenImages("{listen x}"), ["LCurly:{", "Word:listen", "Word:x", "RCurly:}"]);
  assert.equal(heads(parseClean("ingress{listen :8080}")), [["ingress", ["listen :8080"]]]);
});

tokens("a placeholder inside a word keeps the word whole", () => {
  assert.equal(tokenImages("a{env.X}b"), ["Word:a{env.X}b"]);
  assert.equal(tokenImages("https://{vars.HOST}/in"), ["Word:https://{vars.HOST}/in"]);
  for (const placeholder of ["{env.NAME}", "{$NAME}", "{$NAME:default}", "{$PORT::8080}", "{$X:}", "{file./run/secrets/t}", "{vars.NAME}"]) {
    assert.equal(tokenImages(`x${placeholder}y`), [`Word:x${placeholder}y`], placeholder);
    assert.equal(tokenImages(placeholder), [`Word:${placeholder}`], placeholder);
  }
});

tokens("braces that do not form a placeholder are block braces", () => {
  assert.equal(tokenImages("{env.}"), ["LCurly:{", "Word:env.", "RCurly:}"]);
  assert.equal(tokenImages("{env.A B}"), ["LCurly:{", "Word:env.A", "Word:B", "RCurly:}"]);
  assert.equal(tokenImages("{other.X}"), ["LCurly:{", "Word:other.X", "RCurly:}"]);
  assert.equal(tokenImages("x{$X}y{"), ["Word:x{$X}y", "LCurly:{"]);
});

tokens("a bare word stops at '#', '\"', ';' and braces", () => {
  assert.equal(tokenImages("a#b"), ["Word:a", "Comment:#b"]);
  assert.equal(tokenImages('a"b"'), ["Word:a", 'QuotedString:"b"']);
  assert.equal(tokenImages("a;b"), ["Word:a", "Semi:;", "Word:b"]);
  assert.equal(tokenImages("a}b{"), ["Word:a", "RCurly:}", "Word:b", "LCurly:{"]);
});

tokens("route paths, matcher names, secret sources and durations are bare words", () => {
  const d = only(parseClean("/hooks/a-b_c.d { match @gh-push @x; auth token file:/run/secrets/t; max_body 2mb }"));
  assert.equal(d.name!.value, "/hooks/a-b_c.d");
  assert.equal(heads(d.block!.items), ["match @gh-push @x", "auth token file:/run/secrets/t", "max_body 2mb"]);
});

const strings = suite("quoted strings");

strings("the escapes \\\\ \\\" \\n \\t \\r are decoded and the raw text is kept", () => {
  const raw = String.raw`"a\\b \"q\" n\n t\t r\r"`;
  const d = only(parseClean(`header X ${raw}`));
  assert.is(d.args[1].kind, "string");
  assert.is(d.args[1].value, 'a\\b "q" n\n t\t r\r');
  assert.is(d.args[1].raw, raw);
});

strings("any other backslash is kept literally (Windows paths, regexes)", () => {
  const d = only(parseClean(String.raw`exec "C:\Program Files\x.exe" "^\d+\.\w$" "end\\"`));
  assert.equal(d.args.map((a) => a.value), [String.raw`C:\Program Files\x.exe`, String.raw`^\d+\.\w$`, "end\\"]);
});

strings("'#', ';' and braces inside quotes are text", () => {
  const d = only(parseClean('header "X-Hash" "a # b; { c }" # real comment'));
  assert.equal(d.args.map((a) => a.value), ["X-Hash", "a # b; { c }"]);
  assert.is(d.trailingComment!.text, "# real comment");
});

strings("an empty string is an argument", () => {
  const d = only(parseClean('header "X-Empty" ""'));
  assert.equal(d.args.map((a) => [a.kind, a.value]), [["string", "X-Empty"], ["string", ""]]);
});

strings("a string does not span lines: an unterminated one is reported and the next line still parses", () => {
  const result = parseSpoolfile('/a {\n  header "X oops\n  timeout 5s\n}\n', "t.spool");
  assert.equal(result.diagnostics.map(renderDiagnostic), ['t.spool:2:10: unterminated string: expected a closing " before the end of the line']);
  assert.equal(heads(result.tree.items), [["/a", ["header X oops", "timeout 5s"]]]);
});

strings("a backslash before t, n or r is an escape even in a Windows path; a doubled backslash is one backslash", () => {
  assert.is(only(parseClean(String.raw`exec "C:\temp\new"`)).args[0].value, "C:\temp\new");
  assert.is(only(parseClean(String.raw`exec "C:\\temp\\new"`)).args[0].value, String.raw`C:\temp\new`);
});

strings("an escaped quote at the end leaves the string open", () => {
  assert.equal(renderedErrors('env DIR "C:\\dir\\"\n'), ['t.spool:1:9: unterminated string: expected a closing " before the end of the line']);
});

const comments = suite("comments");

comments("an end-of-line comment after arguments belongs to that statement", () => {
  const d = only(parseClean("listen :8080   # public\n"));
  assert.is(d.trailingComment!.text, "# public");
});

comments("an end-of-line comment after '{' belongs to the block's opening", () => {
  const d = only(parseClean("ingress { # the public side\n  listen :8080\n}\n"));
  assert.is(d.block!.openComment!.text, "# the public side");
  assert.is(d.trailingComment, null);
  assert.equal(heads(d.block!.items), ["listen :8080"]);
  assert.is(d.block!.items.filter((i) => i.kind === "comment").length, 0);
});

comments("an end-of-line comment after '}' belongs to the statement the '}' closes", () => {
  const outer = only(parseClean("ingress {\n  rate_limit { rps 5 } # shared\n} # end of ingress\n"));
  assert.is(outer.trailingComment!.text, "# end of ingress");
  assert.is(only(outer.block!.items).trailingComment!.text, "# shared");
});

comments("an end-of-line comment after ';' belongs to the statement before the ';'", () => {
  const d = only(parseClean("pull_api { listen :9443; # consumers\n  auth token env:T\n}"));
  const [listen, auth] = directivesOf(d.block!.items);
  assert.is(listen.trailingComment!.text, "# consumers");
  assert.is(auth.trailingComment, null);
  const opened = only(parseClean("a { ; # nothing before\n}"));
  assert.is(opened.block!.openComment!.text, "# nothing before");
});

comments("a comment on its own line is an item where it stands, trailing whitespace removed", () => {
  const items = parseClean("# head  \t\na {\n  # inside\n  b\n  # before close\n}\n# tail");
  assert.equal(items.map((i) => i.kind), ["comment", "directive", "comment"]);
  assert.is((items[0] as { text: string }).text, "# head");
  const inner = (items[1] as Directive).block!.items;
  assert.equal(inner.map((i) => i.kind), ["comment", "directive", "comment"]);
  assert.is((items[2] as { text: string }).text, "# tail");
});

comments("a comment on the line after a statement is not attached to it", () => {
  const items = parseClean("a 1\n# about b\nb 2\n");
  assert.equal(items.map((i) => i.kind), ["directive", "comment", "directive"]);
  assert.is((items[0] as Directive).trailingComment, null);
});

const blanks = suite("blank lines");

blanks("blank lines are recorded where they are, one item per empty line", () => {
  const items = parseClean("a\n\n\nb\nc\n  \t\nd\n");
  assert.equal(items.map((i) => i.kind), ["directive", "blank", "blank", "directive", "directive", "blank", "directive"]);
  assert.equal(items.filter((i) => i.kind === "blank").map((i) => i.span.line), [2, 3, 6]);
});

blanks("blank lines inside a block and at the start of the file are recorded", () => {
  const items = parseClean("\n\na {\n  b\n\n  c\n}\n");
  assert.equal(items.map((i) => i.kind), ["blank", "blank", "directive"]);
  assert.equal((items[2] as Directive).block!.items.map((i) => i.kind), ["directive", "blank", "directive"]);
});

blanks("a line ending in an attached comment is not blank, the line after it counts", () => {
  const items = parseClean("a # x\n\nb\n");
  assert.equal(items.map((i) => i.kind), ["directive", "blank", "directive"]);
});

const spans = suite("positions");

spans("names, arguments and comments carry 1-based line and column", () => {
  const items = parseClean("# c\ningress {\n  listen  :8080 # eol\n}\n");
  const ingress = items[1] as Directive;
  assert.equal([ingress.name!.span.line, ingress.name!.span.col], [2, 1]);
  const listen = only(ingress.block!.items);
  assert.equal([listen.name!.span.line, listen.name!.span.col], [3, 3]);
  assert.equal([listen.args[0].span.line, listen.args[0].span.col], [3, 11]);
  assert.equal([listen.trailingComment!.span.line, listen.trailingComment!.span.col], [3, 17]);
  assert.equal([ingress.block!.open.line, ingress.block!.open.col, ingress.block!.close!.line, ingress.block!.close!.col], [2, 9, 4, 1]);
});

spans("CRLF counts as one line break and a tab as one column", () => {
  const text = "a {\r\n\tb\t\"x\"\r\n\r\n\t\tc # z\r\n}\r\n";
  const a = only(parseClean(text));
  const [b, c] = directivesOf(a.block!.items);
  assert.equal([b.name!.span.line, b.name!.span.col, b.args[0].span.line, b.args[0].span.col], [2, 2, 2, 4]);
  assert.equal([c.name!.span.line, c.name!.span.col, c.trailingComment!.span.col], [4, 3, 5]);
  assert.equal(a.block!.items.map((i) => i.kind), ["directive", "blank", "directive"]);
  assert.equal([a.block!.close!.line, a.block!.close!.col], [5, 1]);
  assert.is(c.trailingComment!.text, "# z", "no CR in the comment text");
});

spans("offsets index the source text and a directive spans from its name to its closing '}'", () => {
  const text = "x 1\n/a { pull { path /a } } # t\n";
  const route = directivesOf(parseClean(text))[1];
  assert.is(text.slice(route.span.offset, route.span.endOffset), "/a { pull { path /a } }");
  const arg = only(directivesOf(route.block!.items)[0].block!.items).args[0];
  assert.is(text.slice(arg.span.offset, arg.span.endOffset), "/a");
  assert.is(text.slice(route.trailingComment!.span.offset, route.trailingComment!.span.endOffset), "# t");
});

const errors = suite("syntax errors");

errors("blocks nested deeper than MAX_BLOCK_DEPTH are one positioned error, not a stack overflow", () => {
  const deep = "x {".repeat(300) + "}".repeat(300);
  const { diagnostics } = parseSpoolfile(deep, "deep.spool");
  assert.equal(diagnostics.map(renderDiagnostic), [`deep.spool:1:${3 * MAX_BLOCK_DEPTH + 3}: blocks nested more than ${MAX_BLOCK_DEPTH} levels deep`]);
  const deepest = "x {".repeat(MAX_BLOCK_DEPTH) + "}".repeat(MAX_BLOCK_DEPTH);
  assert.equal(parseSpoolfile(deepest).diagnostics, [], "the limit itself parses");
});

errors("every syntax error in a file is reported with its position", () => {
  const text = [
    "ingress {", // 1: closed by line 3
    '  listen ":8080', // 2: unterminated string
    "}",
    "}", // 4: stray
    "/a {", // 5: never closed
    "  { path /a }", // 6: block without a name
    '  header "X', // 7: unterminated
  ].join("\n");
  assert.equal(renderedErrors(text), [
    't.spool:2:10: unterminated string: expected a closing " before the end of the line',
    't.spool:4:1: unexpected "}": no block is open here',
    't.spool:5:4: unclosed block: expected "}" to close this "{" before the end of the file',
    't.spool:6:3: expected a directive name before "{"',
    't.spool:7:10: unterminated string: expected a closing " before the end of the line',
  ]);
});

errors("a tree comes back with the errors: statements around the errors are kept", () => {
  const result = parseSpoolfile("} a 1\nb {\n  c 2\n", "t.spool");
  assert.is(result.diagnostics.length, 2);
  assert.equal(heads(result.tree.items), ["a 1", ["b", ["c 2"]]]);
  assert.is(only(result.tree.items.slice(1)).block!.close, null);
});

errors("every error is an error, none a warning, and the file name is the one given", () => {
  const result = parseSpoolfile('}\n"x', "conf/Spoolfile");
  assert.ok(result.diagnostics.length === 2);
  assert.ok(result.diagnostics.every((d) => d.severity === "error" && d.span.file === "conf/Spoolfile"));
});

const encoding = suite("UTF-8 decoding");

encoding("valid UTF-8 decodes to its text and a BOM is not part of it", () => {
  assert.equal(decodeSpoolfileBytes(new TextEncoder().encode("a é ✓ 🚀\n"), "f"), { text: "a é ✓ 🚀\n" });
  assert.equal(decodeSpoolfileBytes(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]), "f"), { text: "a" });
});

encoding("an invalid byte is reported at the line and column the parser would give it, naming the byte", () => {
  const bytes = new Uint8Array([...new TextEncoder().encode("a\r\n# é\nb é"), 0xff, 0x0a]);
  const decoded = decodeSpoolfileBytes(bytes, "conf/Spoolfile");
  assert.ok("diagnostic" in decoded);
  assert.is(renderDiagnostic(decoded.diagnostic), "conf/Spoolfile:3:4: invalid UTF-8: expected UTF-8 text, found byte 0xFF");
  assert.is(decoded.diagnostic.span.offset, "a\r\n# é\nb é".length, "offsets are UTF-16 indexes like every span");
});

encoding("lone CR line breaks and astral characters count as they do in the parser", () => {
  const text = "a\rb\r🚀 ";
  const decoded = decodeSpoolfileBytes(new Uint8Array([...new TextEncoder().encode(text), 0xc3, 0x28]), "f");
  assert.ok("diagnostic" in decoded);
  const parsedWord = directivesOf(parseSpoolfile(text + "x", "f").tree.items).at(-1)!.args[0];
  assert.equal([decoded.diagnostic.span.line, decoded.diagnostic.span.col], [parsedWord.span.line, parsedWord.span.col]);
  assert.equal([decoded.diagnostic.span.line, decoded.diagnostic.span.col], [3, 4]);
});

encoding("a truncated sequence, an overlong form, a surrogate and a code point past U+10FFFF are reported where they start", () => {
  for (const bad of [[0x61, 0xe2, 0x82], [0x61, 0xc0, 0xaf], [0x61, 0xe0, 0x80, 0xaf], [0x61, 0xed, 0xa0, 0x80], [0x61, 0xf4, 0x90, 0x80, 0x80]]) {
    const decoded = decodeSpoolfileBytes(new Uint8Array(bad), "f");
    assert.ok("diagnostic" in decoded, JSON.stringify(bad));
    assert.equal([decoded.diagnostic.span.line, decoded.diagnostic.span.col], [1, 2], JSON.stringify(bad));
  }
});

errors("150,000 stray braces are 150,000 positioned errors, not a stack overflow", () => {
  const { diagnostics } = parseSpoolfile("}".repeat(150_000) + "\n", "Spoolfile");
  assert.is(diagnostics.length, 150_000);
  assert.equal([diagnostics[149_999].span.line, diagnostics[149_999].span.col], [1, 150_000]);
});

statements.run();
tokens.run();
strings.run();
comments.run();
blanks.run();
spans.run();
errors.run();
encoding.run();
