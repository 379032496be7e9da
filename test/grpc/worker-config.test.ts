// The gRPC worker service's configuration in a running `spool run`: the config errors (with
// file:line:col) that stop a start, grpc_listen as a restart-only setting on reload, the
// pull_api rate limit shared with HTTP (RESOURCE_EXHAUSTED with retry-after), a port already
// taken, and SIGTERM with a long poll open.
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { pullCall } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { isFailure, workerClient } from "./helpers/client.js";

const RESOURCE_EXHAUSTED = 8;
const temp = makeTempDir("grpc-config");
const test = suite("spool run: gRPC worker service configuration");

test.after(() => temp.cleanup());

test("spool run refuses grpc_listen without a pull route, or on another listener's port, naming file:line:col", async () => {
  const ports = await freePorts();
  const cases: [name: string, text: string, message: RegExp][] = [
    ["no-route", spoolfileText(ports, `/hooks/a { deliver "https://example.com/in" }`, { pullExtra: "; grpc_listen 127.0.0.1:0" }), /Spoolfile\.no-route:2:\d+: conflicting settings: pull_api › grpc_listen: expected a route with pull \{ path … \}/],
    ["same-port", spoolfileText(ports, `/hooks/a { pull { path /a } }`, { pullExtra: `; grpc_listen 127.0.0.1:${ports.admin}` }), new RegExp(`Spoolfile\\.same-port:2:\\d+: .*pull_api › grpc_listen: expected a port of its own for grpc_listen \\(admin_api listen uses 127\\.0\\.0\\.1:${ports.admin}\\)`)],
  ];
  for (const [name, text, message] of cases) {
    const config = writeSpoolfile(temp.path, text, `Spoolfile.${name}`);
    const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, `${name}.db`)]);
    const { code } = await proc.exited;
    assert.is(code, 1, name);
    assert.match(proc.output(), message);
  }
});

test("a port already in use stops the start with an error naming it", async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const taken = (blocker.address() as { port: number }).port;
  try {
    const ports = await freePorts();
    const config = writeSpoolfile(temp.path, spoolfileText(ports, `/hooks/a { pull { path /a } }`, { pullExtra: `; grpc_listen 127.0.0.1:${taken}` }), "Spoolfile.taken");
    const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "taken.db")]);
    const { code } = await proc.exited;
    assert.is(code, 1);
    assert.match(proc.output(), new RegExp(`pull_api grpc_listen cannot listen: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${taken}`));
    // Nothing started, so nothing is said to have stopped (the log pairs spool_started with spool_stopped).
    assert.not.match(proc.output(), /spool_stopped/);
  } finally {
    blocker.close();
  }
});

test("grpc_listen is restart-only; the rate limit is shared with HTTP; SIGTERM answers an open long poll", async () => {
  const ports = await freePorts();
  const grpcPort = await freePort();
  const u = urls(ports);
  const text = (grpc: number) => spoolfileText(ports, `/hooks/a { pull { path /a } }`, { pullExtra: `; grpc_listen 127.0.0.1:${grpc}; rate_limit { rps 0.01; burst 3 }` });
  const config = writeSpoolfile(temp.path, text(grpcPort), "Spoolfile.live");
  const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "live.db"), "--watch"]);
  const worker = workerClient(`127.0.0.1:${grpcPort}`, "pull-token");
  try {
    await waitHealthy(proc, u.admin);
    writeFileSync(config, text(grpcPort + 1));
    await proc.waitForOutput("config_reloaded_restart_required");
    const line = proc.output().split("\n").find((l) => l.includes("config_reloaded_restart_required"))!;
    assert.equal(JSON.parse(line).changes, ["pull_api.grpc_listen"]);
    writeFileSync(config, text(grpcPort));

    // burst 3 per token, over both bindings: two gRPC calls and one HTTP call take it.
    assert.equal(await worker.call("Dequeue", { endpoint: "/a" }), { items: [] }, "the old address still serves");
    assert.equal(await worker.call("Ack", { endpoint: "/a", lease_ids: ["x"] }), { acked: 0, conflicts: [{ lease_id: "x", expired: false, reason: "lease_not_found" }] });
    assert.is((await pullCall(`${u.pull}/a`, "dequeue", "pull-token", {})).status, 200);
    const limited = await worker.call("Dequeue", { endpoint: "/a" });
    assert.ok(isFailure(limited), JSON.stringify(limited));
    assert.is(limited.code, RESOURCE_EXHAUSTED);
    assert.equal(limited.metadata.get("spool-error-code"), ["rate_limited"]);
    assert.ok(Number(limited.metadata.get("retry-after")[0]) >= 1);
    assert.is((await pullCall(`${u.pull}/a`, "dequeue", "pull-token", {})).status, 429, "and HTTP is limited too");
  } finally {
    worker.close();
    const result = await stopSpool(proc);
    assert.is(result.code, 0, proc.output().slice(-2000));
  }
});

test("SIGTERM answers an open long poll with no items and exits 0", async () => {
  const ports = await freePorts();
  const grpcPort = await freePort();
  const config = writeSpoolfile(temp.path, spoolfileText(ports, `/hooks/a { pull { path /a } }`, { pullExtra: `; grpc_listen 127.0.0.1:${grpcPort}` }), "Spoolfile.stop");
  const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "stop.db")]);
  const worker = workerClient(`127.0.0.1:${grpcPort}`, "pull-token");
  try {
    await waitHealthy(proc, urls(ports).admin);
    assert.equal(await worker.call("Dequeue", { endpoint: "/a" }), { items: [] }, "connected");
    const polling = worker.call("Dequeue", { endpoint: "/a", max_wait: { seconds: 25 } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = stopSpool(proc);
    assert.equal(await polling, { items: [] });
    assert.is((await stopped).code, 0, proc.output().slice(-2000));
  } finally {
    worker.close();
    proc.kill("SIGKILL");
  }
});

test.run();
