// Turns (runtime/store/postgres/turns.ts): the calls of one key take turns, those arriving during a
// run are run together next, a failed run fails only its own group, and keys do not wait for each other.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Turns } from "../../runtime/store/postgres/turns.js";

const test = suite("postgres store: turns");

interface Call {
  n: number;
  skip?: boolean;
}

/** Turns whose runs wait until the test releases them, recording each run's key and group. */
function recorded(groupSize = (waiting: readonly Call[]) => waiting.length) {
  const runs: { key: string; group: number[]; release: (fail?: Error) => void }[] = [];
  const turns = new Turns<Call, string>({
    groupSize,
    run: (key, group) =>
      new Promise((resolve, reject) => {
        runs.push({ key, group: group.map((c) => c.n), release: (fail) => (fail ? reject(fail) : resolve(group.map((c) => `${key}:${c.n}`))) });
      }),
    answerUnrun: (call) => (call.skip ? "skipped" : undefined),
  });
  return { turns, runs };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("calls arriving while a run goes are run together next, in arrival order, as many as groupSize allows", async () => {
  const { turns, runs } = recorded((waiting) => Math.min(2, waiting.length));
  const answers = [1, 2, 3, 4].map((n) => turns.take("k", { n }));
  await tick();
  assert.equal(runs.map((r) => r.group), [[1]]);
  runs[0].release();
  await tick();
  assert.equal(runs.map((r) => r.group), [[1], [2, 3]]);
  runs[1].release();
  await tick();
  runs[2].release();
  assert.equal(await Promise.all(answers), ["k:1", "k:2", "k:3", "k:4"]);
  assert.equal(runs.map((r) => r.group), [[1], [2, 3], [4]]);
});

test("a failed run rejects each call of its group, and the calls after it still run", async () => {
  const { turns, runs } = recorded();
  const first = turns.take("k", { n: 1 });
  const [second, third] = [turns.take("k", { n: 2 }), turns.take("k", { n: 3 })];
  const later = turns.take("k", { n: 4 });
  await tick();
  runs[0].release();
  await tick();
  assert.equal(runs[1].group, [2, 3, 4]);
  runs[1].release(new Error("database gone"));
  assert.is(await first, "k:1");
  for (const failed of [second, third, later]) await failed.then(() => assert.unreachable("resolved"), (error: Error) => assert.is(error.message, "database gone"));
  // The turn is free again.
  const after = turns.take("k", { n: 5 });
  await tick();
  runs[2].release();
  assert.is(await after, "k:5");
});

test("a call that no longer needs to run is answered without running; other keys run side by side", async () => {
  const { turns, runs } = recorded();
  const a = turns.take("a", { n: 1 });
  const skipped = turns.take("a", { n: 2, skip: true });
  const b = turns.take("b", { n: 1 });
  await tick();
  assert.equal(runs.map((r) => [r.key, r.group]), [["a", [1]], ["b", [1]]]);
  runs[1].release();
  assert.is(await b, "b:1");
  runs[0].release();
  assert.is(await a, "a:1");
  assert.is(await skipped, "skipped");
  assert.is(runs.length, 2);
});

test.run();
