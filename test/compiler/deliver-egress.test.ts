// A deliver target the egress policy can only refuse is a compile error that names the setting to
// change; what a placeholder or DNS decides stays for delivery time (test/delivery, test/app).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import { renderDiagnostic } from "../../grammar/index.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { repoPath } from "../helpers/repo.js";

function errorsOf(text: string, env: Record<string, string> = {}): string[] {
  return compileSpoolfile(text, "Spoolfile", { env })
    .diagnostics.filter((d) => d.severity === "error")
    .map(renderDiagnostic);
}

const route = (url: string, egress = "") => `${egress ? `defaults {\n  egress {\n${egress}\n  }\n}\n` : ""}/x {\n  deliver "${url}"\n}\n`;

const test = suite("deliver targets the egress policy refuses");

test("http:// under the default https_only is an error at the URL naming the setting", () => {
  const errors = errorsOf(route("http://hooks.example/in"));
  assert.equal(errors, [
    "Spoolfile:2:11: deliver: the egress policy refuses http://hooks.example/in (route /x): https_only is on; set defaults { egress { https_only off } } (or use https://)",
  ]);
});

test("a literal loopback, private, link-local or IPv4-mapped address names the allow rule that admits it", () => {
  for (const [url, address, kind] of [
    ["https://127.0.0.1:17001/hook", "127.0.0.1", "loopback"],
    ["https://10.1.2.3/in", "10.1.2.3", "private"],
    ["https://[::ffff:169.254.169.254]/latest", "169.254.169.254", "link-local"],
    ["https://[::1]:8443/in", "::1", "loopback"],
  ]) {
    const [error, ...rest] = errorsOf(route(url));
    assert.equal(rest, [], url);
    assert.match(error, `${address} is a ${kind} address and dns_rebind_protection is on; add allow "${address}" to defaults { egress { … } }`);
    assert.match(error, "or set dns_rebind_protection off");
  }
});

test("http:// to a literal private address names both settings in one error", () => {
  const [error] = errorsOf(route("http://127.0.0.1:17001/hook"));
  assert.match(error, /https_only is on; .* and 127\.0\.0\.1 is a loopback address/);
});

test("a deny rule covering a literal address, or naming the host, is named", () => {
  assert.match(errorsOf(route("https://203.0.113.7/in", '    deny "203.0.113.0/24"'))[0], 'deny "203.0.113.0/24" covers 203.0.113.7; remove that rule');
  assert.match(errorsOf(route("https://bad.example/in", '    deny "*.example"'))[0], 'deny "*.example" names bad.example; remove that rule');
});

test("a deny rule covers a NAT64 literal by the IPv4 address it carries, as it does the SIIT form", () => {
  for (const url of ["https://[64:ff9b::1.1.1.1]/a", "https://[::ffff:1.1.1.1]/a"]) {
    const errors = errorsOf(route(url, '    deny "1.1.1.0/24"'));
    assert.is(errors.length, 1, url);
    assert.match(errors[0], 'deny "1.1.1.0/24" covers');
  }
  assert.equal(errorsOf(route("https://[64:ff9b::8.8.8.8]/a", '    deny "1.1.1.0/24"')), []);
});

test("a literal address outside a non-empty allow list is named with the rule to add", () => {
  assert.match(errorsOf(route("https://198.51.100.7/in", '    allow "*.example.com"'))[0], '198.51.100.7 is not in the egress allow list; add allow "198.51.100.7"');
});

test("the message shows the URL as written: no query values, no placeholder values", () => {
  const [error] = errorsOf(route("http://{env.HOOK_HOST}/in?token=s3cr3t-query&plain="), { HOOK_HOST: "hooks.example" });
  assert.match(error, "refuses http://{env.HOOK_HOST}/in?token=(redacted)&plain= (route /x)");
  assert.not.match(error, "s3cr3t-query");
});

test("what the policy admits, or only DNS or a placeholder decides, compiles", () => {
  const valid = [
    route("http://127.0.0.1:17001/hook", "    https_only off\n    dns_rebind_protection off"),
    route("https://127.0.0.1:17001/hook", '    allow "127.0.0.1"'),
    route("https://10.0.0.0:1/x", '    allow "10.0.0.0/8"'),
    route("https://localhost:17001/hook"),
    route("https://hooks.example.com/in"),
    route("https://{env.HOOK_HOST}/in"),
    route("{env.HOOK_URL}"),
    route("https://{vars.HOST}:8443/in").replace("/x {", 'vars {\n  HOST "127.0.0.1"\n}\n/x {'),
  ];
  for (const text of valid) assert.equal(errorsOf(text, { HOOK_HOST: "10.0.0.1", HOOK_URL: "http://127.0.0.1/in" }), [], text);
});

test("spool config validate exits 1 on such a target, and the repository's example Spoolfile and valid fixtures still validate", () => {
  const temp = makeTempDir("deliver-egress");
  try {
    const file = join(temp.path, "Spoolfile");
    writeFileSync(file, route("http://127.0.0.1:17001/hook"));
    const cli = repoPath("dist", "cli", "main.js");
    let status = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [cli, "config", "validate", "--config", file], { encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      status = (error as { status: number }).status;
      stderr = `${(error as { stdout: string }).stdout}${(error as { stderr: string }).stderr}`;
    }
    assert.is(status, 1);
    assert.match(stderr, "deliver: the egress policy refuses http://127.0.0.1:17001/hook (route /x): https_only is on");
    execFileSync(process.execPath, [cli, "config", "validate", "--config", repoPath("Spoolfile")], { stdio: "pipe" });
  } finally {
    temp.cleanup();
  }
});

test.run();
