// End to end lifecycle of the built `spool run`: hot reload by --watch and SIGHUP (valid, invalid
// and restart-only edits), SIGTERM with open long polls, and durability across SIGKILL.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, eventually, pullCall } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

const temp = makeTempDir("e2e-lifecycle");
const test = suite("spool run: lifecycle end to end");
test.after(() => temp.cleanup());

const ROUTE_A = "/hooks/a { pull { path /a } }";
const ROUTE_B = "/hooks/b { pull { path /b } }";

/** A fresh directory with a Spoolfile serving ROUTE_A on free ports, and `spool run` started on it with `flags`. */
async function serveRouteA(name: string, flags: string[] = []) {
  const dir = join(temp.path, name);
  mkdirSync(dir);
  const ports = await freePorts();
  const u = urls(ports);
  const config = writeSpoolfile(dir, spoolfileText(ports, ROUTE_A));
  const proc = spawnSpool(["run", "--config", config, "--db", join(dir, "spool.db"), ...flags]);
  return { dir, ports, u, config, proc };
}

test("--watch applies a valid edit (rename-write), keeps serving on an invalid one, refuses a listener change", async () => {
  const { dir, ports, u, config, proc } = await serveRouteA("watch", ["--watch"]);
  try {
    await waitHealthy(proc, u.admin);
    assert.is((await call(`${u.ingress}/hooks/b`, { body: "x" })).status, 404);
    const identity = async () =>
      (await call(`${u.admin}/healthz?details=1`, { method: "GET", headers: { authorization: "Bearer admin-token" } })).json.diagnostics.config;
    const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
    // The fingerprint is what `sha256sum Spoolfile` prints, so deploy tooling can confirm the file serving.
    assert.is((await identity()).fingerprint, sha256(config));

    // An editor's save: write a temp file, rename it over the config.
    writeFileSync(join(dir, "Spoolfile.tmp"), spoolfileText(ports, `${ROUTE_A}\n${ROUTE_B}`));
    renameSync(join(dir, "Spoolfile.tmp"), config);
    await eventually(async () => ((await call(`${u.ingress}/hooks/b`, { body: "x" })).status === 202 ? true : undefined), 5_000, "route b after reload");
    const applied = sha256(config);
    const afterEdit = await identity();
    assert.equal([afterEdit.fingerprint, afterEdit.generation], [applied, 2]);

    // Invalid, and the error is about a credential's line: the log names the place, not the value.
    const leaky = `/hooks/leaky { deliver "https://x.example/in?token=LeakedT0ken" { sign raw:Misplaced5ecret } }`;
    writeFileSync(config, spoolfileText(ports, `${ROUTE_A}\n/hooks/broken { pull { path } }\n${leaky}`));
    await proc.waitForOutput("config_reload_failed");
    const failure = proc.output().split("\n").find((line) => line.includes("config_reload_failed"))!;
    assert.match(failure, /Spoolfile:\d+:\d+: invalid choice: route \/hooks\/leaky › deliver › sign: expected one of hmac, /);
    assert.not.match(proc.output(), /LeakedT0ken|Misplaced5ecret/);
    assert.is((await call(`${u.ingress}/hooks/b`, { body: "x" })).status, 202, "the old config keeps serving");
    assert.is((await call(`${u.ingress}/hooks/a`, { body: "x" })).status, 202);

    writeFileSync(config, spoolfileText(ports, `${ROUTE_A}\n${ROUTE_B}`).replace(`listen 127.0.0.1:${ports.ingress}`, `listen 127.0.0.2:${ports.ingress}`));
    await proc.waitForOutput("config_reloaded_restart_required");
    assert.is((await call(`${u.ingress}/hooks/b`, { body: "x" })).status, 202, "listener unchanged, still serving");
    const details = await call(`${u.admin}/healthz?details=1`, { method: "GET", headers: { authorization: "Bearer admin-token" } });
    assert.is(details.json.diagnostics.config.generation, 2, "only the valid edit was applied");
    assert.is(details.json.diagnostics.config.fingerprint, applied, "the fingerprint names the file that serves, not the refused edits");
  } finally {
    const result = await stopSpool(proc);
    assert.is(result.code, 0);
  }
});

/** `spool run --pid-file` in a fresh directory on `routes(dir)`, once healthy and its pid file written. */
async function startWithPidFile(name: string, routes: (dir: string) => string) {
  const dir = join(temp.path, name);
  mkdirSync(dir);
  const ports = await freePorts();
  const u = urls(ports);
  const config = writeSpoolfile(dir, spoolfileText(ports, routes(dir)));
  const pidFile = join(dir, "spool.pid");
  const proc = spawnSpool(["run", "--config", config, "--db", join(dir, "spool.db"), "--pid-file", pidFile]);
  await waitHealthy(proc, u.admin);
  await eventually(() => (existsSync(pidFile) ? true : undefined), 5_000, "pid file");
  return { dir, ports, u, config, pidFile, proc };
}

test("--watch compares files by their bytes: a change the decoded text hides (a BOM) still reloads, so the fingerprint names the file", async () => {
  const { ports, u, config, proc } = await serveRouteA("watch-bytes", ["--watch"]);
  const identity = async () =>
    (await call(`${u.admin}/healthz?details=1`, { method: "GET", headers: { authorization: "Bearer admin-token" } })).json.diagnostics.config;
  try {
    await waitHealthy(proc, u.admin);
    writeFileSync(config, "\uFEFF" + spoolfileText(ports, ROUTE_A));
    const sha256 = createHash("sha256").update(readFileSync(config)).digest("hex");
    const reloaded = await eventually(async () => {
      const id = await identity();
      return id.fingerprint === sha256 ? id : undefined;
    }, 5_000, "the fingerprint of the file with its BOM");
    assert.is(reloaded.generation, 2);
  } finally {
    assert.is((await stopSpool(proc)).code, 0);
  }
});

test("SIGHUP re-reads an unchanged Spoolfile: a rotated file: token takes effect", async () => {
  const tokenFile = (dir: string) => join(dir, "ingress-token");
  const { u, proc, dir } = await startWithPidFile("hup-secret", (dir) => {
    writeFileSync(tokenFile(dir), "token-a\n");
    return `/hooks/s { auth token file:${tokenFile(dir)}; pull { path /s } }`;
  });
  const post = (token: string) => call(`${u.ingress}/hooks/s`, { headers: { authorization: `Bearer ${token}` }, body: "x" }).then((r) => r.status);
  try {
    assert.equal([await post("token-a"), await post("token-b")], [202, 401]);
    writeFileSync(tokenFile(dir), "token-b\n");
    process.kill(proc.child.pid!, "SIGHUP");
    await eventually(async () => ((await post("token-b")) === 202 ? true : undefined), 5_000, "the rotated token after SIGHUP");
    assert.is(await post("token-a"), 401, "the old token no longer passes");
  } finally {
    const result = await stopSpool(proc);
    assert.is(result.code, 0);
  }
});

test("SIGHUP with --pid-file reloads routes and the pull_api rate limit; the pid file holds the pid once healthy and is removed on exit", async () => {
  const { ports, u, config, pidFile, proc } = await startWithPidFile("hup", () => ROUTE_A);
  try {
    assert.is(Number(readFileSync(pidFile, "utf8").trim()), proc.child.pid);

    writeFileSync(config, spoolfileText(ports, `${ROUTE_A}\n${ROUTE_B}`, { pullExtra: "; rate_limit { rps 0.01; burst 1 }" }));
    await new Promise((r) => setTimeout(r, 300));
    assert.is((await call(`${u.ingress}/hooks/b`, { body: "x" })).status, 404, "without --watch an edit is not applied");
    process.kill(proc.child.pid!, "SIGHUP");
    await eventually(async () => ((await call(`${u.ingress}/hooks/b`, { body: "x" })).status === 202 ? true : undefined), 5_000, "route b after SIGHUP");
    // The pull rate limit came with the same reload (it is live, not restart-only): burst 1 per token.
    assert.is((await pullCall(`${u.pull}/b`, "dequeue", "pull-token")).status, 200);
    const limited = await pullCall(`${u.pull}/a`, "dequeue", "pull-token");
    assert.equal([limited.status, limited.json.code, limited.headers.get("retry-after")], [429, "rate_limited", "100"]);

    writeFileSync(config, "this is { not a spoolfile");
    process.kill(proc.child.pid!, "SIGHUP");
    await proc.waitForOutput("config_reload_failed");
    assert.is((await call(`${u.ingress}/hooks/b`, { body: "x" })).status, 202);
  } finally {
    const result = await stopSpool(proc);
    assert.is(result.code, 0);
    assert.not.ok(existsSync(pidFile), "pid file removed");
  }
});

test("a --pid-file that cannot be written stops the start: exit 1 naming it, listeners closed", async () => {
  const dir = join(temp.path, "pid-unwritable");
  mkdirSync(dir);
  const ports = await freePorts();
  const config = writeSpoolfile(dir, spoolfileText(ports, ROUTE_A));
  const pidFile = join(dir, "missing-dir", "spool.pid");
  const proc = spawnSpool(["run", "--config", config, "--db", join(dir, "spool.db"), "--pid-file", pidFile]);
  const { code } = await proc.exited;
  assert.is(code, 1, proc.output());
  assert.match(proc.output(), `cannot write the pid file ${pidFile}`);
  const after = await fetch(`${urls(ports).admin}/healthz`).then(
    (response) => `answered ${response.status}`,
    () => "refused",
  );
  assert.is(after, "refused", "nothing is left listening");
});

test("a --db whose directory cannot be made is a startup error: exit 1 naming it, not a usage error", async () => {
  const dir = join(temp.path, "db-under-file");
  mkdirSync(dir);
  const ports = await freePorts();
  const config = writeSpoolfile(dir, spoolfileText(ports, ROUTE_A));
  writeFileSync(join(dir, "afile"), "");
  const proc = spawnSpool(["run", "--config", config, "--db", join(dir, "afile", "spool.db")]);
  const { code } = await proc.exited;
  assert.is(code, 1, proc.output());
  assert.match(proc.output(), "cannot create the directory of --db");
});

test("SIGTERM answers open long polls at once with empty items and the process exits", async () => {
  const { u, proc } = await serveRouteA("term");
  await waitHealthy(proc, u.admin);
  const polls = Array.from({ length: 5 }, () => pullCall(`${u.pull}/a`, "dequeue", "pull-token", { max_wait: "30s" }));
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  proc.kill("SIGTERM");
  const replies = await Promise.all(polls);
  for (const reply of replies) {
    assert.is(reply.status, 200);
    assert.equal(reply.json.items, []);
  }
  const result = await proc.exited;
  assert.is(result.code, 0);
  assert.ok(Date.now() - started < 15_000, "exited within 15 s");
});

test("SIGHUP without --pid-file stops the service gracefully, as SIGTERM does: long polls answered, exit 129 (128 + SIGHUP)", async () => {
  const { u, proc } = await serveRouteA("hangup-no-pid-file");
  await waitHealthy(proc, u.admin);
  const poll = pullCall(`${u.pull}/a`, "dequeue", "pull-token", { max_wait: "30s" });
  await new Promise((r) => setTimeout(r, 300));
  proc.kill("SIGHUP");
  const reply = await poll;
  assert.equal([reply.status, reply.json.items], [200, []]);
  proc.kill("SIGHUP"); // a second hangup during the drain does not cut it short
  assert.equal(await proc.exited, { code: 129, signal: null });
  assert.match(proc.output(), /"msg":"spool_stopping".*"signal":"SIGHUP"/);
});

test("durability: every 202 of 100 concurrent requests is dequeuable after SIGKILL and restart", async () => {
  const dir = join(temp.path, "kill");
  mkdirSync(dir);
  const ports = await freePorts();
  const u = urls(ports);
  const config = writeSpoolfile(dir, spoolfileText(ports, ROUTE_A));
  const db = join(dir, "spool.db");
  const first = spawnSpool(["run", "--config", config, "--db", db]);
  await waitHealthy(first, u.admin);
  const replies = await Promise.all(
    Array.from({ length: 100 }, (_, i) => call(`${u.ingress}/hooks/a`, { body: `message-${i}` }).catch(() => undefined)),
  );
  first.kill("SIGKILL");
  await first.exited;
  const accepted = new Set<string>();
  for (const reply of replies) if (reply?.status === 202) accepted.add(reply.json.ids[0]);
  assert.is(accepted.size, 100);

  const second = spawnSpool(["run", "--config", config, "--db", db]);
  try {
    await waitHealthy(second, u.admin);
    const seen = new Map<string, number>();
    for (;;) {
      const { items } = (await pullCall(`${u.pull}/a`, "dequeue", "pull-token", { batch: 100 })).json;
      if (items.length === 0) break;
      for (const item of items) seen.set(item.id, (seen.get(item.id) ?? 0) + 1);
      await pullCall(`${u.pull}/a`, "ack", "pull-token", { lease_ids: items.map((i: { lease_id: string }) => i.lease_id) });
    }
    for (const id of accepted) assert.is(seen.get(id), 1, `${id} stored exactly once`);
    assert.is(seen.size, accepted.size, "nothing stored that was not answered 202");
  } finally {
    await stopSpool(second);
  }
});

test("queue_full on ingress is 503 with Retry-After; the memory backend reports store diagnostics", async () => {
  const dir = join(temp.path, "full");
  mkdirSync(dir);
  const ports = await freePorts();
  const u = urls(ports);
  const config = writeSpoolfile(dir, spoolfileText(ports, "queue_limits { max_depth 2 }\n/hooks/a { queue memory; pull { path /a } }"));
  const proc = spawnSpool(["run", "--config", config, "--db", join(dir, "unused", "spool.db")]);
  try {
    await waitHealthy(proc, u.admin);
    assert.is((await call(`${u.ingress}/hooks/a`, { body: "1" })).status, 202);
    assert.is((await call(`${u.ingress}/hooks/a`, { body: "2" })).status, 202);
    const full = await call(`${u.ingress}/hooks/a`, { body: "3" });
    assert.equal([full.status, full.json.code], [503, "queue_full"]);
    assert.ok(full.headers.get("retry-after"));
    const details = await call(`${u.admin}/healthz?details=1`, { method: "GET", headers: { authorization: "Bearer admin-token" } });
    assert.is(details.json.diagnostics.store.backend, "memory");
    assert.is(details.json.diagnostics.queue.total, 2);
    assert.is(details.json.diagnostics.ingress.rejected_by_reason.queue_full, 1);
    assert.not.ok(existsSync(join(dir, "unused")), "a memory-only config opens no SQLite file");
    const metrics = await (await fetch(u.metrics)).text();
    assert.match(metrics, /spool_store_memory_items\{state="queued"\} 2/);
    assert.not.match(metrics, /spool_store_sqlite_/);
  } finally {
    await stopSpool(proc);
  }
});

test.run();
