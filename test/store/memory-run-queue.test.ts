// The memory store's ready queue (a FIFO run beside a heap) must pop in exactly the order a plain
// sort gives, whatever mix of in-order and out-of-order pushes and interleaved pops it sees.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { RunQueue } from "../../runtime/store/memory/heap.js";
import { fuzzSettings, runProperty } from "../helpers/seeded-random.js";

const test = suite("memory ready queue");
const less = (a: number, b: number) => a < b;

test("pops in sorted order for random pushes and pops (run and heap interleaved)", () => {
  const { seed, runs } = fuzzSettings(200);
  for (let index = 0; index < runs; index++) {
    runProperty(seed, "run queue order", index, (rng, show) => {
      const queue = new RunQueue<number>(less);
      const reference: number[] = [];
      const ops: string[] = [];
      let clock = 0;
      for (let step = 0; step < 400; step++) {
        if (rng.chance(0.6)) {
          // Mostly increasing values (the FIFO case) with some out-of-order ones (the heap case).
          const value = rng.chance(0.8) ? (clock += rng.int(0, 3)) : rng.int(0, clock + 5);
          queue.push(value);
          reference.push(value);
          ops.push(`+${value}`);
        } else {
          reference.sort((a, b) => a - b);
          const expected = reference.shift();
          ops.push("-");
          show(ops.join(" "));
          assert.is(queue.peek(), expected);
          assert.is(queue.pop(), expected);
        }
        assert.is(queue.size, reference.length);
      }
      reference.sort((a, b) => a - b);
      for (const expected of reference) assert.is(queue.pop(), expected);
      assert.is(queue.pop(), undefined);
      assert.is(queue.size, 0);
    });
  }
});

test("a long in-order run drains in order and lets go of consumed entries", () => {
  const queue = new RunQueue<number>(less);
  for (let i = 0; i < 10_000; i++) queue.push(i);
  for (let i = 0; i < 10_000; i++) assert.is(queue.pop(), i);
  assert.is(queue.size, 0);
  queue.push(5);
  queue.push(3);
  assert.equal([queue.pop(), queue.pop(), queue.pop()], [3, 5, undefined]);
});

test.run();
