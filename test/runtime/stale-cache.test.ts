// The two caches in front of the store's queue stats never pass a value older than their bound off
// as current: once the store stops answering, readers get the failure (docs/decisions.md
// D32: health details and queue gauges are at most 2 s stale).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { StaleWhileRefreshCache } from "../../runtime/observability/stale-cache.js";
import { SnapshotCache } from "../../runtime/observability/snapshot-cache.js";

function source() {
  const state = { nowMs: 0, failing: false, loads: 0 };
  const load = async () => {
    state.loads++;
    if (state.failing) throw new Error("store gone");
    return `value@${state.nowMs}`;
  };
  return { state, load, clock: { now: () => state.nowMs } };
}

const test = suite("stale caches");

test("stale-while-refresh: fresh, then stale while a refresh runs, then the failure once past the bound", async () => {
  const { state, load, clock } = source();
  const errors: unknown[] = [];
  const cache = new StaleWhileRefreshCache(load, { refreshAfterMs: 1_000, maxAgeMs: 2_000, clock, onError: (e) => errors.push(e) });
  assert.equal(await cache.get(), { data: "value@0", loadedAtMs: 0 });
  state.failing = true;
  state.nowMs = 500;
  assert.is((await cache.get()).data, "value@0", "fresh: served without loading");
  state.nowMs = 1_500;
  assert.is((await cache.get()).data, "value@0", "stale within the bound: served while a refresh is tried");
  await new Promise((resolve) => setImmediate(resolve));
  state.nowMs = 2_000;
  const failure = await cache.get().then(() => undefined, (error: Error) => error.message);
  assert.is(failure, "store gone", "past the bound and the store does not answer");
  assert.ok(errors.length >= 2);
  state.failing = false;
  assert.equal(await cache.get(), { data: "value@2000", loadedAtMs: 2_000 }, "recovers with the store");
});

test("stale-while-refresh: a load that never answers is a failure after the bound, and a late answer still lands", async () => {
  let answer: (value: string) => void = () => {};
  let hang = false;
  const clock = { now: () => 0 };
  const cache = new StaleWhileRefreshCache(
    () => (hang ? new Promise<string>((resolve) => (answer = resolve)) : Promise.resolve("first")),
    { refreshAfterMs: 20, maxAgeMs: 50, clock },
  );
  assert.is((await cache.get()).data, "first");
  hang = true;
  clock.now = () => 1_000;
  const failure = await cache.get().then(() => undefined, (error: Error) => error.message);
  assert.is(failure, "no answer within 50 ms");
  answer("late");
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(cache.peek()?.data, "late");
});

test("snapshot cache: undefined, not the last value, when a load fails", async () => {
  const { state, load, clock } = source();
  const cache = new SnapshotCache(load, { maxAgeMs: 0, clock });
  assert.is(await cache.get(), "value@0");
  state.failing = true;
  state.nowMs = 1;
  const errors: unknown[] = [];
  assert.is(await cache.get((e) => errors.push(e)), undefined);
  assert.is(errors.length, 1);
});

test.run();
