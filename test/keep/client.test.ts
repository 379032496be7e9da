// The client library (route C) against real servers: trust only the given CA (also with
// NODE_TLS_REJECT_UNAUTHORIZED=0), SecretValue never shows its value, environment() follows the
// naming rules and refuses whole sets before reading, and KeepError's status/code/is_retryable.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
process.emitWarning = () => undefined;

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { format, inspect } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as ClientModule from "../../keep/client/index.js";
import { repoPath } from "../helpers/repo.js";
import { issue, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep client library");
let lib: typeof ClientModule;
let fx: Fixture;
let plain: Served;
let withExport: Served;
let rogueServed: Served;
let ci: string;
let nobody: string;
const audits = () => (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const auditOf = audits();

test.before(async () => {
  lib = (await import("spool/keep" as string)) as typeof ClientModule;
  fx = await makeFixture("client");
  put(fx, "app/prod/DB_PASSWORD", "pw\nwith newline");
  put(fx, "app/prod/API_KEY", "api-key-value");
  put(fx, "app/clash/a/KEY", "clash-a");
  put(fx, "app/clash/b/KEY", "clash-b");
  put(fx, "app/badname/1BAD", "bad-1");
  put(fx, "app/badname/GOOD", "good");
  ci = issue(fx, "ci-app");
  nobody = issue(fx, "nobody");
  plain = await serve(fx, ["--audit-log", join(fx.dir, "plain-audit.log")]);
  withExport = await serve(fx, ["--enable-export", "--audit-log", join(fx.dir, "export-audit.log")]);
  writeFileSync(join(fx.dir, "rogue-server.pem"), fx.rogue.certPem);
  writeFileSync(join(fx.dir, "rogue-server-key.pem"), fx.rogue.keyPem);
  rogueServed = await serve({ ...fx, certFile: join(fx.dir, "rogue-server.pem"), keyFile: join(fx.dir, "rogue-server-key.pem") }, ["--audit-log", join(fx.dir, "rogue-audit.log")]);
});
test.after(async () => {
  await Promise.all([plain.stop(), withExport.stop(), rogueServed.stop()]);
  fx.cleanup();
});

const client = (s: Served, token = ci, ca: string | Buffer | Uint8Array = fx.certs.caPem) => new lib.KeepClient({ url: s.url, token, ca });

async function failure(p: Promise<unknown>): Promise<ClientModule.KeepError> {
  try {
    await p;
  } catch (error) {
    assert.instance(error, lib.KeepError);
    assert.is((error as Error).name, "KeepError");
    assert.not.ok(`${(error as Error).message} ${inspect(error)}`.includes(ci), "no token in errors");
    return error as ClientModule.KeepError;
  }
  throw new Error("expected a KeepError");
}

test("the package exports spool/keep: KeepClient, KeepError, SecretValue", () => {
  const pkg = JSON.parse(readFileSync(repoPath("package.json"), "utf8"));
  const entry = pkg.exports["./keep"];
  assert.ok(existsSync(repoPath(entry.import)), "the module exists");
  assert.ok(existsSync(repoPath(entry.types)), "its types exist");
  assert.type(lib.KeepClient, "function");
  assert.type(lib.SecretValue, "function");
});

test("url, token and ca are required with the right types; a non-https URL throws TypeError", () => {
  const ok = { url: "https://127.0.0.1:1", token: "t", ca: fx.certs.caPem };
  for (const bad of [{}, { ...ok, url: undefined }, { ...ok, token: undefined }, { ...ok, ca: undefined }, { ...ok, ca: 42 }, { ...ok, token: 7 }, { ...ok, url: "http://127.0.0.1:1" }, { ...ok, url: "ftp://x" }, { ...ok, url: "not a url" }]) {
    assert.throws(() => new lib.KeepClient(bad as never), (e: unknown) => e instanceof TypeError, JSON.stringify(bad));
  }
  new lib.KeepClient({ ...ok, ca: Buffer.from(fx.certs.caPem) });
  new lib.KeepClient({ ...ok, ca: new Uint8Array(Buffer.from(fx.certs.caPem)) });
});

test("the library reads no environment variable and never writes process.env", () => {
  for (const dir of ["client", "consumer"]) {
    for (const file of ["index.ts", "secret-value.ts", "errors.ts", "names.ts", "transport.ts", "fetch-set.ts"]) {
      let text: string;
      try {
        text = readFileSync(repoPath("keep", dir, file), "utf8");
      } catch {
        continue;
      }
      assert.not.ok(/process\.env/.test(text), `${dir}/${file}`);
    }
  }
});

test("read returns a SecretValue whose only way out is reveal()", async () => {
  const v = await client(plain).read("app/prod/API_KEY");
  assert.is(v.reveal(), "api-key-value");
  const shown = [String(v), `${v}`, "" + v, inspect(v), inspect(v, { showHidden: true }), format("%o", v), format("%O", v), format("%s", v), inspect({ nested: [v] }, { showHidden: true, depth: 9 }), inspect(structuredClone(v), { showHidden: true }), inspect({ ...v }, { showHidden: true })];
  for (const s of shown) assert.not.ok(s.includes("api-key-value"), s);
  assert.is(String(v), "[redacted]");
  assert.is(inspect(v), "[redacted]");
  assert.throws(() => JSON.stringify({ v }));
  assert.equal(Object.getOwnPropertyNames(v), []);
  assert.equal(Object.getOwnPropertySymbols(v), []);
});

test("list returns the listing, possibly empty", async () => {
  assert.equal(await client(plain).list("app/prod"), ["app/prod/API_KEY", "app/prod/DB_PASSWORD"]);
  assert.equal(await client(plain, nobody).list("app"), []);
});

test("environment(prefix) names each secret by its last segment, via export when enabled", async () => {
  const snapshot = JSON.stringify(process.env);
  for (const s of [withExport, plain]) {
    const env = await client(s).environment("app/prod/");
    assert.equal([...env.keys()].sort(), ["API_KEY", "DB_PASSWORD"]);
    assert.is(env.get("DB_PASSWORD")!.reveal(), "pw\nwith newline");
    assert.equal([...(await client(s).environment("app/prod")).keys()].sort(), ["API_KEY", "DB_PASSWORD"]);
  }
  assert.is(JSON.stringify(process.env), snapshot, "process.env untouched");
  assert.ok(auditOf(join(fx.dir, "export-audit.log")).every((l) => l.op === "export"));
  assert.ok(auditOf(join(fx.dir, "plain-audit.log")).some((l) => l.op === "read"), "export 404 falls back to one GET per path");
});

test("a collision, a bad name or an empty listing refuses the whole set and reads nothing", async () => {
  const before = auditOf(join(fx.dir, "export-audit.log")).length;
  const clash = await failure(client(withExport).environment("app/clash"));
  assert.is(clash.code, "name_collision");
  assert.match(clash.message, /app\/clash\/a\/KEY/);
  assert.match(clash.message, /app\/clash\/b\/KEY/);
  assert.not.ok(clash.message.includes("clash-a"));
  const bad = await failure(client(withExport).environment("app/badname"));
  assert.is(bad.code, "invalid_name");
  const empty = await failure(client(withExport, nobody).environment("app/prod"));
  assert.is(empty.code, "empty_listing");
  const none = await failure(client(withExport).environment("app/nothing"));
  assert.is(none.code, "empty_listing");
  for (const e of [clash, bad, empty, none]) {
    assert.is(e.status, undefined);
    assert.is(e.is_retryable, false);
  }
  assert.is(auditOf(join(fx.dir, "export-audit.log")).length, before, "nothing was read");
  assert.is((await failure(client(plain).read("bad//path"))).code, "invalid_path");
});

test("server errors carry status and code; only 503 is retryable", async () => {
  const unknown = await failure(client(plain, "A".repeat(43)).read("app/prod/API_KEY"));
  assert.equal([unknown.status, unknown.code, unknown.is_retryable], [401, "unauthorized", false]);
  const forbidden = await failure(client(plain).read("secret/none"));
  assert.equal([forbidden.status, forbidden.code, forbidden.is_retryable], [403, "forbidden", false]);
  const missing = await failure(client(plain).read("app/none"));
  assert.equal([missing.status, missing.code, missing.is_retryable], [404, "not_found", false]);
  const full = await serve(fx, ["--audit-log", "/dev/full"]);
  try {
    const unavailable = await failure(client(full).read("app/prod/API_KEY"));
    assert.equal([unavailable.status, unavailable.code, unavailable.is_retryable], [503, "audit_unavailable", true]);
    assert.not.ok(unavailable.message.includes("api-key-value"));
  } finally {
    await full.stop();
  }
});

test("transport failures: status undefined, Node's code, retryable", async () => {
  const closed = await serve(fx, ["--audit-log", join(fx.dir, "closed.log")]);
  await closed.stop();
  const refused = await failure(client(closed).read("app/prod/API_KEY"));
  assert.equal([refused.status, refused.code, refused.is_retryable], [undefined, "ECONNREFUSED", true]);
});

test("a server that never answers times out: ETIMEDOUT, retryable, one attempt (no retry loop)", async () => {
  let connections = 0;
  const silent = createNetServer((socket) => {
    connections++;
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as { port: number }).port;
  try {
    const c = new lib.KeepClient({ url: `https://127.0.0.1:${port}`, token: ci, ca: fx.certs.caPem, timeoutMs: 300 });
    const e = await failure(c.read("app/prod/API_KEY"));
    assert.equal([e.status, e.code, e.is_retryable], [undefined, "ETIMEDOUT", true]);
    assert.is(connections, 1);
  } finally {
    silent.close();
  }
});

test("a rogue CA is refused, also with NODE_TLS_REJECT_UNAUTHORIZED=0", async () => {
  assert.is(process.env.NODE_TLS_REJECT_UNAUTHORIZED, "0");
  const wrongCa = await failure(client(plain, ci, fx.rogue.caPem).read("app/prod/API_KEY"));
  const rogueServer = await failure(client(rogueServed).read("app/prod/API_KEY"));
  for (const e of [wrongCa, rogueServer]) {
    assert.is(e.status, undefined);
    assert.is(e.is_retryable, false);
    assert.match(e.code, /UNABLE_TO_VERIFY|SELF_SIGNED|CERT/);
  }
  assert.is(auditOf(join(fx.dir, "rogue-audit.log")).length, 0, "the rogue server never received the request");
});

test.run();
