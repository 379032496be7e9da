// logSafeDiagnostics: config errors as `config diff --semantic` and `spool run` print them, built
// from their structured parts only (code, subject, expected, suggestion), never from the file's values. The sweep breaks every line of a file full of
// credentials in several ways (the typos that put a credential where a message quotes it) and checks
// that no credential reaches a message, while every error keeps its position.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, logSafeDiagnostics } from "../../compiler/index.js";
import { seededRandom } from "../helpers/seeded-random.js";

const test = suite("masked diagnostics");

const CREDENTIALS = ["hunterpass", "98765432", "Zq7SECRETmark", "/Zq7PATHSECRET", "RAWSECRET1", "HDRSECRET2", "basicpass3", "VARSECRET4", "URLPASS5", "QTOKEN6", "EXECENV7", "MATCHHDR8", "MATCHQ9", "TRACEHDR10", "SECRETSV11", "ENVSECRETVAL777", "424242"];

const SEED = `admin_api { listen 127.0.0.1:2019; auth token raw:RAWSECRET1 }
observability {
  tracing {
    enabled on
    collector "https://otel.example/v1"
    header "Authorization" "TRACEHDR10"
    proxy_url "http://u:URLPASS5@proxy.example:3128"
  }
}
vars {
  TOK VARSECRET4
}
secrets { secret "s1" { value raw:SECRETSV11; valid_from "2026-01-01T00:00:00Z" } }
@m { header "X-Key" "MATCHHDR8"; query "k" "MATCHQ9" }
/in {
  match @m
  auth basic "user" "basicpass3"
  deliver "https://h.example/x?token=QTOKEN6" { header "X-Api" "HDRSECRET2"; header "X-V" "{vars.TOK}"; sign hmac raw:RAWSECRET1 }
}
/in2 {
  auth basic "pin" "424242"
  deliver "https://h.example/y" { header "Authorization" "Bearer {env.SPOOL_MASK_TEST_ENV}" }
}
/in3 {
  deliver exec "/bin/true" { env KEY EXECENV7; env K2 "{env.SPOOL_MASK_TEST_ENV}" }
}
/in4 {
  auth token env:hunterpass
  deliver "https://hooks.example/x?token={$SPOOL_MASK_TEST_UNSET:Zq7SECRETmark}" { header "X-Long" "98765432${"p".repeat(220)}"; header "X-Path" "/Zq7PATHSECRET" }
}
`;

const OPTIONS = { env: { SPOOL_MASK_TEST_ENV: "ENVSECRETVAL777", hunterpass: "set" } };

/** Ways a line goes wrong: each leaves a credential where the compiler reports something. */
const BREAKS: readonly ((line: string) => string)[] = [
  (line) => `${line.replace(/\s*[{}]\s*$/, "")} extra`, // one argument too many
  (line) => line.replace(/^(\s*)\S+\s+/, "$1"), // the directive name lost: its first argument becomes the name
  (line) => line.replace(/^(\s*)(\S+)/, "$1$2x"), // a misspelt name
  (line) => `${line}\n${line}`, // repeated
  (line) => line.replace(/^(\s*\S+\s+)(\S+)\s+(\S+)/, "$1$3 $2"), // two arguments swapped
  (line) => line.replace(/"/, ""), // a quote lost
  (line) => line.replace(/;/, " "), // two statements run together
  // The same, in every statement of a line that holds several (`{ a x; b y }`):
  (line) => line.replace(/\s*([;}])/g, " extra$1"),
  (line) => line.replace(/([{;]\s+)\S+\s+/g, "$1"),
  (line) => line.replace(/([{;]\s+\S+\s+)\S+\s+/g, "$1"), // the first argument lost
  (line) => line.replace(/"([^"]*)"/g, '"\\n$1"'), // a control character in every string
];

test("no credential reaches a message, whatever line breaks and how; every error keeps its place", () => {
  const seeded = compileSpoolfile(SEED, "Spoolfile", OPTIONS);
  assert.ok(seeded.config, seeded.diagnostics.map((d) => d.message).join("\n"));
  const lines = SEED.split("\n");
  const random = seededRandom(0x5eed);
  let reported = 0;
  const quotedUnmasked = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    for (const [b, breakLine] of BREAKS.entries()) {
      const broken = [...lines];
      broken[i] = breakLine(lines[i]);
      // Sometimes a second line breaks too, so errors from two places meet in one report.
      if (random.chance(0.3)) {
        const j = random.int(0, lines.length - 1);
        broken[j] = random.pick(BREAKS)(broken[j]);
      }
      const text = broken.join("\n");
      const compiled = compileSpoolfile(text, "Spoolfile", OPTIONS);
      const masked = logSafeDiagnostics(compiled.diagnostics);
      const where = `line ${i + 1}, break ${b}`;
      assert.equal(
        masked.map((d) => [d.severity, d.span]),
        compiled.diagnostics.map((d) => [d.severity, d.span]),
        where,
      );
      for (const d of compiled.diagnostics) for (const c of CREDENTIALS) if (d.message.includes(c)) quotedUnmasked.add(c);
      for (const d of masked) {
        const leaked = CREDENTIALS.find((c) => d.message.includes(c));
        assert.not.ok(leaked, `${where}: ${leaked} in ${JSON.stringify(d.message)}`);
      }
      reported += masked.length;
    }
  }
  // Unmasked, the messages do quote them: the sweep reaches the messages that matter.
  assert.ok(quotedUnmasked.size >= 6, `the sweep only made messages quote ${[...quotedUnmasked].join(", ")}`);
  assert.ok(reported > 50, `only ${reported} diagnostics`);
});

test("what stays: the position, the code's sentence, the subject and what was expected", () => {
  const text = `/a {\n  pull { path /a; auth token raw:x }\n  deliver "https://h.example/in" { retry exponential max 8 base 2s cap 2m jitter 0.2 timeout 5s }\n  hunterpass\n}\nvars {\n  zq7lower\n}\n`;
  const compiled = compileSpoolfile(text, "Spoolfile");
  const masked = logSafeDiagnostics(compiled.diagnostics);
  const byLine = new Map(masked.map((d) => [d.span.line, d.message]));
  assert.equal(masked.map((d) => d.span), compiled.diagnostics.map((d) => d.span));
  assert.is(byLine.get(3), "invalid choice: route /a › deliver › retry: expected one of max, base, cap, jitter");
  // A value where a name goes (a password wrapped onto its own line) is never shown: only the block it is in.
  assert.ok(compiled.diagnostics.some((d) => d.message.includes("hunterpass")));
  assert.match(byLine.get(4)!, /^unknown directive: route \/a: expected one of: application, /);
  // Nor is a name inside vars: the operator's own, and a misplaced value reads as one.
  assert.ok(compiled.diagnostics.some((d) => d.message.includes("zq7lower")));
  assert.is(byLine.get(7), "wrong number of arguments: vars: expected 1 argument (zq7lower <value>)".replace("zq7lower", "NAME"));
  assert.not.ok(masked.some((d) => d.message.includes("zq7lower") || "found" in d));
});

test("a syntax error has no subject: its log line is the sentence and what was expected", () => {
  const text = `/a {\n  deliver "https://h.example/x?token=SYNTAXSECRET" {\n`;
  const lines = logSafeDiagnostics(compileSpoolfile(text, "Spoolfile").diagnostics).map((d) => d.message);
  assert.ok(lines.includes('unclosed block: expected "}" to close this "{" before the end of the file'), lines.join("\n"));
  assert.not.ok(lines.some((l) => l.includes("SYNTAXSECRET")));
});

test.run();
