// TLS files are judged by what they hold, not only whether they can be read (docs/spoolfile.md "TLS").
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import { tlsFileProblem } from "../../compiler/tls-files.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { makeTlsMaterial } from "../helpers/tls-material.js";

const test = suite("compiler: TLS file contents");
const material = makeTlsMaterial();
process.on("exit", () => material.cleanup());

test("a PEM certificate and key pass; junk, or a key given as a certificate, does not", async () => {
  const { readFileSync } = await import("node:fs");
  assert.is(tlsFileProblem("certificate", readFileSync(material.file("server.pem"))), undefined);
  assert.is(tlsFileProblem("private_key", readFileSync(material.file("server.key"))), undefined);
  assert.match(tlsFileProblem("certificate", "junk\n") ?? "", "no PEM certificate");
  assert.match(tlsFileProblem("certificate", readFileSync(material.file("server.key"))) ?? "", "no PEM certificate");
  assert.match(tlsFileProblem("private_key", "-----BEGIN PRIVATE KEY-----\njunk\n-----END PRIVATE KEY-----\n") ?? "", "not a valid PEM private key");
});

test("junk listener TLS files are refused-by-run warnings naming the file, never its content; tracing tls ones are plain warnings", () => {
  const temp = makeTempDir("tls-files");
  try {
    writeFileSync(join(temp.path, "junk.pem"), "Junk4Content\n");
    const file = join(temp.path, "Spoolfile");
    const text = `ingress {\n  tls {\n    cert_file junk.pem\n    key_file junk.pem\n  }\n}\nobservability {\n  tracing {\n    collector "https://otel.example"\n    tls { ca_file junk.pem }\n  }\n}\n/a { deliver "https://hooks.example/in" }\n`;
    const result = compileSpoolfile(text, file, { env: {} });
    const warnings = result.diagnostics.filter((d) => d.severity === "warning");
    const listener = warnings.filter((d) => d.refusedByRun);
    assert.equal(listener.map((d) => [d.span.line, d.message.split(":").slice(0, 2).join(":")]), [
      [2, "ingress tls: cert_file junk.pem cannot be read"],
      [2, "ingress tls: key_file junk.pem cannot be read"],
    ]);
    assert.ok(warnings.some((d) => !d.refusedByRun && d.message.startsWith("tracing tls: ca_file junk.pem cannot be read: it holds no PEM certificate")));
    assert.not.ok(JSON.stringify(result.diagnostics).includes("Junk4Content"));
    const strict = compileSpoolfile(text, file, { env: {}, strictSecrets: true });
    assert.is(strict.diagnostics.filter((d) => d.severity === "error").length, 2);
  } finally {
    temp.cleanup();
  }
});

test("a log file path below a regular file, or a directory, is a refused-by-run warning at its block; a missing directory is not", () => {
  const temp = makeTempDir("log-path");
  try {
    writeFileSync(join(temp.path, "plain"), "");
    const text = (path: string) => `observability {\n  runtime_log {\n    output file\n    path ${JSON.stringify(path)}\n  }\n}\n/a { deliver "https://hooks.example/in" }\n`;
    for (const path of [join(temp.path, "plain", "x.log"), temp.path]) {
      const [warning, ...rest] = compileSpoolfile(text(path), "Spoolfile", { env: {} }).diagnostics;
      assert.equal(rest, [], path);
      assert.ok(warning.refusedByRun && warning.span.line === 2, warning.message);
      assert.match(warning.message, `runtime_log: log file ${path} cannot be opened`);
      const strict = compileSpoolfile(text(path), "Spoolfile", { env: {}, strictSecrets: true });
      assert.is(strict.diagnostics[0].severity, "error");
    }
    assert.equal(compileSpoolfile(text(join(temp.path, "new", "dir", "x.log")), "Spoolfile", { env: {} }).diagnostics, []);
  } finally {
    temp.cleanup();
  }
});

test.run();
