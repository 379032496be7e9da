// The runtime secret parts below the Admin API (docs/secrets.md): SPOOL_SECRET_ENCRYPTION_KEY
// parsing, the sealed blob's format, and the pools on a real SQLite store with a TestClock
// (seeding, pruning at start and before a full pool refuses, the pruned counter).
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, type SpoolConfig } from "../../compiler/index.js";
import { ApiError } from "../../runtime/errors.js";
import { parseEncryptionKey } from "../../compiler/index.js";
import { RuntimeSecrets } from "../../runtime/secrets/pools.js";
import { Sealer } from "../../runtime/secrets/seal.js";
import { openStore } from "../../runtime/store/open.js";
import type { Store } from "../../runtime/store/store.js";
import { TestClock } from "../../runtime/time/clock.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const key = suite("SPOOL_SECRET_ENCRYPTION_KEY");
const KEY = randomBytes(32);

key("standard or URL alphabet, padding optional, whitespace ignored: the same 32 bytes", () => {
  const std = KEY.toString("base64");
  const url = KEY.toString("base64url");
  for (const text of [std, std.replace(/=+$/, ""), url, `${url}=`, `  ${std.slice(0, 20)}\n ${std.slice(20)}\t`]) {
    const parsed = parseEncryptionKey(text);
    assert.ok(parsed.ok, text);
    if (parsed.ok) assert.equal(parsed.key, KEY);
  }
});

key("missing, empty, malformed or the wrong length: a problem naming the variable, never the value", () => {
  const cases: [string | undefined, RegExp][] = [
    [undefined, /SPOOL_SECRET_ENCRYPTION_KEY is not set/],
    ["", /SPOOL_SECRET_ENCRYPTION_KEY is empty/],
    ["  \n", /SPOOL_SECRET_ENCRYPTION_KEY is empty/],
    ["not*base64*secret", /SPOOL_SECRET_ENCRYPTION_KEY is not base64/],
    [`ab+c-d${"A".repeat(38)}`, /not base64/],
    [randomBytes(16).toString("base64"), /decodes to 16 bytes/],
    [randomBytes(33).toString("base64"), /decodes to 33 bytes/],
    [`${KEY.toString("base64")}=`, /not base64/],
  ];
  for (const [text, problem] of cases) {
    const parsed = parseEncryptionKey(text);
    assert.not.ok(parsed.ok, String(text));
    if (!parsed.ok) {
      assert.match(parsed.problem, problem);
      if (text?.trim()) assert.not.ok(parsed.problem.includes(text.trim()), parsed.problem);
    }
  }
});

key.run();

const seal = suite("sealing");

seal("0x01 ‖ 12-byte nonce ‖ ciphertext ‖ 16-byte tag; opens with the key for the same pool and id only", () => {
  const sealer = new Sealer(KEY);
  const plaintext = Buffer.from("whsec-plain-value");
  const blob = sealer.seal("partner", "sec_1", plaintext);
  assert.is(blob[0], 0x01);
  assert.is(blob.length, 1 + 12 + plaintext.length + 16);
  assert.is(blob.indexOf(plaintext), -1);
  assert.equal(sealer.open("partner", "sec_1", blob), plaintext);
  // A fresh nonce every time.
  assert.not.equal(sealer.seal("partner", "sec_1", plaintext), blob);
  assert.throws(() => new Sealer(randomBytes(32)).open("partner", "sec_1", blob), /cannot open/);
  assert.throws(() => sealer.open("partner", "sec_2", blob), /cannot open/);
  assert.throws(() => sealer.open("other", "sec_1", blob), /cannot open/);
  const tampered = Buffer.from(blob);
  tampered[20] ^= 1;
  assert.throws(() => sealer.open("partner", "sec_1", tampered), /cannot open/);
  assert.throws(() => sealer.open("partner", "sec_1", Buffer.concat([Buffer.from([2]), blob.subarray(1)])), /format 1/);
});

seal.run();

const pools = suite("runtime secret pools on a SQLite store");
const temp = makeTempDir("runtime-secrets");
let counter = 0;

function configOf(text: string, routePool = "p"): SpoolConfig {
  const result = compileSpoolfile(`pull_api { auth token raw:t }\n${text}\n/in { auth hmac secret_ref "${routePool}"; pull { path /in } }\n`, "Spoolfile", { env: { SPOOL_SECRET_ENCRYPTION_KEY: KEY.toString("base64") } });
  assert.ok(result.config, result.diagnostics.map((d) => d.message).join("\n"));
  return result.config!;
}

async function poolsOn(clock: TestClock, store?: Store) {
  const opened = store ?? (await openStore({ backend: "sqlite", sqlitePath: join(temp.path, `p${++counter}.db`) }, { clock }));
  const pruned: [string, number][] = [];
  const errors: string[] = [];
  const secrets = new RuntimeSecrets({
    store: opened,
    sealer: new Sealer(KEY),
    clock,
    onPruned: (pool, count) => pruned.push([pool, count]),
    onError: (task, error) => errors.push(`${task}: ${(error as Error).message}`),
    refreshIntervalMs: 0,
  });
  return { store: opened, secrets, pruned, errors };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, ApiError);
    return (error as ApiError).code;
  }
  throw new Error("expected a refusal");
}

pools("seeds sec_bootstrap from value (valid_from, valid_until), once; the versions open for ingress", async () => {
  const clock = new TestClock();
  const config = configOf(`secrets { secret "p" { runtime on; value raw:seed; valid_until "2099-01-01T00:00:00Z" } }`);
  const { store, secrets } = await poolsOn(clock);
  await secrets.start(config);
  const listed = secrets.list(config, "p");
  assert.equal(listed.versions.map((v) => [v.id, v.not_after]), [["sec_bootstrap", "2099-01-01T00:00:00.000Z"]]);
  assert.equal(secrets.versionsOf("p").map((v) => v.value.toString()), ["seed"]);
  secrets.stop();
  // A second start over the same store opens the stored version and seeds nothing.
  const again = new RuntimeSecrets({ store, sealer: new Sealer(KEY), clock, onPruned() {}, onError() {}, refreshIntervalMs: 0 });
  await again.start(config);
  assert.is((await store.listRuntimeSecrets("p")).length, 1);
  again.stop();
  // Another key cannot open it: the start stops, naming pool and id.
  const wrong = new RuntimeSecrets({ store, sealer: new Sealer(randomBytes(32)), clock, onPruned() {}, onError() {}, refreshIntervalMs: 0 });
  try {
    await wrong.start(config);
    assert.unreachable("started with another key");
  } catch (error) {
    assert.match((error as Error).message, /runtime secret "p" version sec_bootstrap cannot be opened/);
  }
  await store.close();
});

pools("a reload adding a pool seeds it; versions of a pool the reload removes stay stored", async () => {
  const clock = new TestClock();
  const before = configOf(`secrets { secret "p" { runtime on } }`);
  const after = configOf(`secrets {\n  secret "p" { runtime on }\n  secret "q" { runtime on; value raw:q-seed }\n}`);
  const { store, secrets } = await poolsOn(clock);
  await secrets.start(before);
  await secrets.add(before, "p", async () => ({ value: "p1" }));
  secrets.reconfigure(after);
  // Work on the pools runs one at a time: once this prune is done, the seeding before it is too.
  await secrets.prune();
  assert.equal(secrets.list(after, "q").versions.map((v) => v.id), ["sec_bootstrap"]);
  assert.equal(secrets.versionsOf("q").map((v) => v.value.toString()), ["q-seed"]);
  // A pool that stays is not seeded again by a reload: a deleted bootstrap stays deleted.
  await secrets.remove(after, "q", "sec_bootstrap");
  secrets.reconfigure(after);
  await secrets.prune();
  assert.equal(secrets.list(after, "q").versions, []);
  const withoutP = configOf(`secrets { secret "q" { runtime on } }`, "q");
  secrets.reconfigure(withoutP);
  await secrets.prune();
  assert.is((await store.listRuntimeSecrets("p")).length, 1);
  secrets.stop();
  await store.close();
});

pools("expired versions are pruned at start and before a full pool refuses an add, counted by pool", async () => {
  const clock = new TestClock();
  const config = configOf(`secrets { secret "p" { runtime on; max_versions 2 } }`);
  const { store, secrets, pruned } = await poolsOn(clock);
  await secrets.start(config);
  const soon = clock.now() + 1000;
  const a = await secrets.add(config, "p", async () => ({ value: "a", notAfterMs: soon }));
  await secrets.add(config, "p", async () => ({ value: "b" }));
  assert.is(await refusal(secrets.add(config, "p", async () => ({ value: "c" }))), "secret_pool_full");
  assert.equal(pruned, []);
  clock.advance(1000);
  // Full, but `a` has expired: pruned, then the add succeeds.
  const c = await secrets.add(config, "p", async () => ({ value: "c" }));
  assert.equal(pruned, [["p", 1]]);
  assert.not.ok((await store.listRuntimeSecrets("p")).some((r) => r.id === a.id));
  assert.ok(secrets.list(config, "p").versions.some((v) => v.id === c.id));
  secrets.stop();
  // At start: a version that expired while stopped is pruned with its row.
  await secrets.add(config, "p", async () => ({ value: "never" })).catch(() => undefined);
  await store.addRuntimeSecret({ pool: "p", id: "sec_old", sealed: new Sealer(KEY).seal("p", "sec_old", Buffer.from("old")), notBeforeMs: 0, notAfterMs: clock.now() - 1, createdAtMs: 0 });
  const restarted = await poolsOn(clock, store);
  await restarted.secrets.start(config);
  assert.equal(restarted.pruned, [["p", 1]]);
  assert.not.ok((await store.listRuntimeSecrets("p")).some((r) => r.id === "sec_old"));
  restarted.secrets.stop();
  await store.close();
});

pools("checks: pool declared, runtime on, key present, then the body; windows and blank values", async () => {
  const clock = new TestClock();
  const config = configOf(`secrets {\n  secret "p" { runtime on }\n  secret "s" { value raw:x }\n}`);
  const { store, secrets } = await poolsOn(clock);
  await secrets.start(config);
  const body = async () => ({ value: "v" });
  assert.is(await refusal(secrets.add(config, "nope", body)), "secret_pool_not_found");
  assert.is(await refusal(secrets.add(config, "s", body)), "secret_not_runtime");
  assert.is(await refusal(secrets.add(config, "p", async () => ({ value: " \t" }))), "secret_value_empty");
  const t = clock.now() + 60_000;
  assert.is(await refusal(secrets.add(config, "p", async () => ({ value: "v", notBeforeMs: t, notAfterMs: t }))), "secret_invalid_window");
  assert.is(await refusal(secrets.add(config, "p", async () => ({ value: "v", notAfterMs: clock.now() - 1 }))), "secret_invalid_window");
  assert.is(await refusal(secrets.remove(config, "p", "sec_0000000000000000")), "secret_id_not_found");
  const unavailable = new RuntimeSecrets({ store, sealer: null, clock, onPruned() {}, onError() {}, refreshIntervalMs: 0 });
  await unavailable.start(config);
  assert.is(await refusal(unavailable.add(config, "p", body)), "secret_management_unavailable");
  assert.is(await refusal(unavailable.add(config, "nope", body)), "secret_pool_not_found");
  secrets.stop();
  await store.close();
  // The store gone: nothing changes, 500 secret_persist_failure.
  assert.is(await refusal(secrets.add(config, "p", body)), "secret_persist_failure");
  assert.equal(secrets.list(config, "p").versions, []);
});

pools.after(() => temp.cleanup());
pools.run();
