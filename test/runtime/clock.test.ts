// The system clock's sleep past setTimeout's range (2^31 − 1 ms): Node would fire such a timer after
// 1 ms with a TimeoutOverflowWarning, which made a nack delay or lease of over 24.8 days a busy loop
// of wake-ups in the ready signal.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { MAX_TIMER_MS, systemClock, timerDelayMs } from "../../runtime/time/clock.js";

const test = suite("system clock");

test("a sleep longer than setTimeout can hold neither wakes early nor warns, and abort still ends it", async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  try {
    const abort = new AbortController();
    let outcome = "pending";
    const sleeping = systemClock.sleep(MAX_TIMER_MS + 60_000, abort.signal).then(
      () => (outcome = "woke"),
      () => (outcome = "aborted"),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(outcome, "pending", "still asleep after 100 ms");
    abort.abort();
    await sleeping;
    assert.is(outcome, "aborted");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings, [], "no TimeoutOverflowWarning");
  } finally {
    process.off("warning", onWarning);
  }
});

test("timeouts are clamped to what setTimeout holds", () => {
  assert.is(timerDelayMs(5), 5);
  assert.is(timerDelayMs(-1), 0);
  assert.is(timerDelayMs(30 * 86_400_000), MAX_TIMER_MS);
});

test.run();
