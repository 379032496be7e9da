import { suite } from "uvu";
import * as assert from "uvu/assert";
import { applyPatch } from "diff";
import { compileSpoolfile, diffConfigs, renderChanges, semanticChanges, unifiedDiff, type SpoolConfig } from "../../compiler/index.js";

function ir(text: string): SpoolConfig {
  const result = compileSpoolfile(text, "Spoolfile", { env: {} });
  assert.ok(result.config);
  return result.config!;
}

const base = 'pull_api { auth token raw:t }\n/a { pull { path /a } }\n/b { deliver "https://x.example/in" { timeout 5s } }\n';
const diff = suite("compiler semantic diff");

diff("identical configs (even laid out differently) have no changes", () => {
  assert.equal(diffConfigs(ir(base), ir(base.replace(/\n/g, "\n\n"))), []);
});

diff("routes added and removed are named by path", () => {
  const changes = diffConfigs(ir(base), ir(base.replace("/a { pull { path /a } }", "/c { pull { path /c } }")));
  assert.equal(changes.map((c) => `${c.kind} ${c.path}`), ["removed route /a", "added route /c"]);
});

diff("a target's timeout change names the route and the target", () => {
  const out = renderChanges(diffConfigs(ir(base), ir(base.replace("timeout 5s", "timeout 10s"))));
  assert.is(out, "~ route /b › deliver https://x.example/in › timeout: 5s -> 10s");
});

diff("a changed secret value is reported without printing it", () => {
  const out = renderChanges(diffConfigs(ir(base), ir(base.replace("raw:t", "raw:secret-2"))));
  assert.is(out, "~ pull_api › auth token #1: raw:(secret) -> raw:(secret changed)");
  assert.not.ok(out.includes("secret-2"));
});

diff("header values and basic-auth passwords are compared but never printed, also inside added or removed objects", () => {
  const withHeader = (token: string) => `/b { deliver "https://x.example/in" { header "Authorization" "Bearer ${token}" } }\n`;
  const changed = renderChanges(diffConfigs(ir(base.replace(/\/b \{.*\n/, withHeader("first-token"))), ir(base.replace(/\/b \{.*\n/, withHeader("second-token")))));
  assert.is(changed, '~ route /b › deliver https://x.example/in › header: "Authorization" (redacted) -> "Authorization" (redacted) (changed)');
  assert.not.ok(changed.includes("first-token") || changed.includes("second-token"), changed);
  const added = renderChanges(diffConfigs(ir(base), ir(`${base}/c { auth basic "ops" "hunter2"; pull { path /c } }\n`)));
  assert.match(added, /added route \/c|\+ route \/c/);
  const basic = (pass: string) => `${base}/c { auth basic "ops" "${pass}"; pull { path /c } }\n`;
  const password = renderChanges(diffConfigs(ir(basic("hunter2")), ir(basic("hunter3"))));
  assert.is(password, '~ route /c › auth basic #1: "ops" (redacted) -> "ops" (redacted) (changed)');
  assert.not.ok(password.includes("hunter"), password);
  const same = base.replace(/\/b \{.*\n/, withHeader("same"));
  assert.equal(diffConfigs(ir(same), ir(same)), [], "equal values are no change");
});

diff("route order and a route's target order are changes: first match wins, and fan-out ids come in target order", () => {
  const routes = 'pull_api { auth token raw:t }\n/a { match { method POST PUT }; pull { path /a } }\n/a/b { pull { path /b } }\n/c { pull { path /c } }\n';
  const swapped = 'pull_api { auth token raw:t }\n/a/b { pull { path /b } }\n/a { match { method POST PUT }; pull { path /a } }\n/c { pull { path /c } }\n';
  assert.is(renderChanges(diffConfigs(ir(routes), ir(swapped))), '~ route order: ["/a","/a/b","/c"] -> ["/a/b","/a","/c"]');
  assert.equal(diffConfigs(ir(routes), ir(routes.replace("/c { pull { path /c } }\n", ""))).map((c) => c.path), ["route /c"], "a removal alone is no reordering");
  const fan = (first: string, second: string) => `/f { deliver "https://${first}.example/in"; deliver "https://${second}.example/in" }\n`;
  assert.is(renderChanges(diffConfigs(ir(fan("one", "two")), ir(fan("two", "one")))), '~ route /f › target order: ["https://one.example/in","https://two.example/in"] -> ["https://two.example/in","https://one.example/in"]');
});

diff("vars are named but their values never printed; a URL's password is masked", () => {
  const withVar = (token: string) => `vars { TOKEN ${token} }\n/b { deliver "https://x.example/in" { header "Authorization" "Bearer {vars.TOKEN}" } }\n`;
  const out = renderChanges(diffConfigs(ir(withVar("s3cr3t-A")), ir(withVar("s3cr3t-B"))));
  assert.is(out, '~ vars › TOKEN: (redacted) -> (redacted, changed)\n~ route /b › deliver https://x.example/in › header: "Authorization" (redacted) -> "Authorization" (redacted) (changed)');
  assert.not.ok(out.includes("s3cr3t"), out);
  const tracing = (pw: string) => `${base}observability { tracing { enabled on; collector "https://u:${pw}@otel.example" } }\n`;
  const traced = renderChanges(diffConfigs(ir(tracing("pwA")), ir(tracing("pwB"))));
  assert.is(traced, '~ observability › tracing › collector: "https://u:(redacted)@otel.example" -> "https://u:(redacted)@otel.example" (changed)');
  assert.not.ok(traced.includes("pwA") || traced.includes("pwB"), traced);
});

diff("credentials in a URL's query are never printed (as masked for output): a target renamed there is one line, a forward-auth URL change says so", () => {
  const config = (v: string) =>
    `pull_api { auth token raw:t }\n/e { deliver "https://x.example.com/in?token=qtok-${v}&mode=fast" { } }\n/f { auth forward "https://auth.example.com/check?key=fwdkey-${v}"; pull { path /f } }\n`;
  const out = renderChanges(semanticChanges({ config: ir(config("old")) }, { config: ir(config("new")) }));
  assert.not.ok(/qtok|fwdkey/.test(out), out);
  assert.ok(out.includes("~ route /e › deliver https://x.example.com/in?token=(redacted)&mode=(redacted) (changed where it is not shown)"), out);
  assert.ok(out.includes('~ route /f › auth forward: "https://auth.example.com/check?key=(redacted)" -> "https://auth.example.com/check?key=(redacted)" (changed)'), out);
  assert.is(out.split("\n").length, 2, out);
});

diff("a fan-out's new target order is shown when a target's URL also changed behind a placeholder", () => {
  const before = compileSpoolfile('vars { H "a.example.com" }\n/x { deliver "https://{vars.H}/in" { }; deliver "https://b.example.com" { } }\n', "Spoolfile", { env: {} });
  const after = compileSpoolfile('vars { H "c.example.com" }\n/x { deliver "https://b.example.com" { }; deliver "https://{vars.H}/in" { } }\n', "Spoolfile", { env: {} });
  const out = renderChanges(semanticChanges({ config: before.config!, expansions: before.expansions }, { config: after.config!, expansions: after.expansions }));
  assert.ok(out.includes('~ route /x › target order: ["https://{vars.H}/in","https://b.example.com"] -> ["https://b.example.com","https://{vars.H}/in"]'), out);
  assert.ok(out.includes("~ route /x › deliver https://{vars.H}/in (changed where it is not shown)"), out);
  assert.not.ok(/a\.example|c\.example/.test(out), out);
});

diff("exec env values and match query values are compared but never printed; their names are", () => {
  const exec = (key: string) => `/e { deliver exec "/bin/true" { env API_KEY "${key}" } }\n`;
  const execOut = renderChanges(diffConfigs(ir(exec("sk_live_OLDVALUE1")), ir(exec("sk_live_NEWVALUE2"))));
  assert.is(execOut, '~ route /e › deliver exec /bin/true › env: "API_KEY" (redacted) -> "API_KEY" (redacted) (changed)');
  assert.not.ok(execOut.includes("sk_live"), execOut);
  const matched = (value: string) => `${base}/m { match { query "key" "${value}" }; pull { path /m } }\n`;
  const matchOut = renderChanges(diffConfigs(ir(matched("QUERYSECRET1")), ir(matched("QUERYSECRET2"))));
  assert.is(matchOut, '~ route /m › match › query: "key" (redacted) -> "key" (redacted) (changed)');
  assert.not.ok(matchOut.includes("QUERYSECRET"), matchOut);
});

diff("two large, wholly different files give one whole-file hunk that still applies, instead of an edit search without end", () => {
  // Every 100th line is the same in both: a full edit search would keep those as context lines.
  const routes = (prefix: string) => Array.from({ length: 3_000 }, (_, i) => (i % 100 === 0 ? `# section ${i}` : `/${prefix}${i} { pull { path /p${i} } }`)).join("\n") + "\n";
  const [before, after] = [routes("r"), routes("q")];
  const patch = unifiedDiff(before, after, "old", "new");
  assert.is(patch.split("\n").filter((line) => line.startsWith("@@")).join(), "@@ -1,3000 +1,3000 @@");
  assert.not.ok(patch.includes("\n # section"), "past 2,000 changed lines the search stops: every line is replaced");
  assert.is(applyPatch(before, patch), after);
  const noEol = unifiedDiff("a\nb", before, "old", "new");
  assert.is(applyPatch("a\nb", noEol), before, "a file without a final newline is handled");
  const small = unifiedDiff("a\nb\nc\n", "a\nB\nc\n", "old", "new");
  assert.match(small, /-b\n\+B/, "small changes keep their hunks");
});

diff("a {$X:default}'s default is never printed: the placeholder shows as {$X:(redacted)}", () => {
  const spool = (timeout: string) => `/x { deliver "https://a.example.com/hook/{$NOPE:DefTok444}" { timeout ${timeout} } }\n`;
  const before = compileSpoolfile(spool("5s"), "Spoolfile", { env: {} });
  const after = compileSpoolfile(spool("6s"), "Spoolfile", { env: {} });
  const out = renderChanges(semanticChanges({ config: before.config!, expansions: before.expansions }, { config: after.config!, expansions: after.expansions }));
  assert.is(out, "~ route /x › deliver https://a.example.com/hook/{$NOPE:(redacted)} › timeout: 5s -> 6s");
});

diff("exec arguments are compared but never printed; the program path is", () => {
  const exec = (args: string) => `/e { deliver exec "/bin/prog" ${args} }\n`;
  const changed = renderChanges(semanticChanges({ config: ir(exec('"--token" "ArgTok111"')) }, { config: ir(exec('"--token" "ArgTok112"')) }));
  assert.is(changed, "~ route /e › deliver exec /bin/prog › arguments: (redacted) -> (redacted, changed)");
  const added = renderChanges(semanticChanges({ config: ir(exec("")) }, { config: ir(exec('"--token" "ArgTok111"')) }));
  assert.not.ok(added.includes("ArgTok"), added);
  const removed = renderChanges(semanticChanges({ config: ir(exec('"--token" "ArgTok111"')) }, { config: ir(exec("")) }));
  assert.not.ok(removed.includes("ArgTok"), removed);
});

diff.run();
