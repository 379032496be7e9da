// Spoolfile text as the MCP config tools show it (docs/mcp.md "Redaction"): credential values
// replaced on the parsed tree, everything else (names, layout, comments) kept, and still parseable.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, formatText, redactSpoolfileText, spoolfileOutline } from "../../compiler/index.js";

const test = suite("compiler: Spoolfile text redaction");

const TEXT = `# keep this comment
vars {
  TOKEN s3cr3t-var
  HOST example.com
}
observability {
  tracing {
    enabled on
    collector https://otel.example.com
    header "X-Api-Key" "tracing-key"
  }
}
/a {
  auth basic "alice" "basic-pw"
  deliver "https://{vars.HOST}/x?sig=q-secret&plain=" {
    header "Authorization" "Bearer deliver-secret"
  }
}
/b {
  auth token "raw:quoted-raw-secret"
  auth token env:TOKEN_ENV
  deliver exec "/bin/true" --token=arg-secret { env DB_PASSWORD exec-secret }
}
/c {
  auth hmac raw:{$HMAC:placeholder-default}
  pull { path /c }
}
`;

test("every credential value is replaced; names, references and comments stay", () => {
  const shown = redactSpoolfileText(TEXT);
  for (const secret of ["s3cr3t-var", "tracing-key", "basic-pw", "q-secret", "deliver-secret", "quoted-raw-secret", "exec-secret", "arg-secret", "placeholder-default"]) {
    assert.not.ok(shown.includes(secret), secret);
  }
  for (const kept of ["# keep this comment", "TOKEN (redacted)", '"alice" "(redacted)"', "?sig=(redacted)&plain=", '"raw:(redacted)"', "env:TOKEN_ENV", "env DB_PASSWORD (redacted)", 'deliver exec "/bin/true" (redacted)', "https://otel.example.com", "raw:(redacted)"]) {
    assert.ok(shown.includes(kept), kept);
  }
  // Still a Spoolfile: it parses and formats.
  assert.ok(formatText(shown, "Spoolfile").ok);
  assert.is(redactSpoolfileText(shown), shown);
});

test("the outline is redacted the same way, with lines", () => {
  const { entries, diagnostics } = spoolfileOutline(TEXT);
  assert.equal(diagnostics, []);
  const text = JSON.stringify(entries);
  for (const secret of ["s3cr3t-var", "tracing-key", "basic-pw", "q-secret", "exec-secret", "placeholder-default"]) assert.not.ok(text.includes(secret), secret);
  assert.equal(entries[0], { name: "vars", args: [], line: 2, block: [{ name: "TOKEN", args: ["(redacted)"], line: 3 }, { name: "HOST", args: ["(redacted)"], line: 4 }] });
});

test("a file that does not parse is redacted as far as it parses", () => {
  const broken = 'vars { TOKEN s3cr3t }\n/a { auth basic "u" "pw-secret"\n';
  const shown = redactSpoolfileText(broken);
  assert.not.ok(shown.includes("s3cr3t"));
  assert.not.ok(shown.includes("pw-secret"));
  assert.ok(compileSpoolfile(broken, "Spoolfile").config === null);
});

test.run();
