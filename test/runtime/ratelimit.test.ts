import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TokenBucket } from "../../runtime/ratelimit/bucket.js";
import { RateLimitRegistry } from "../../runtime/ratelimit/registry.js";

function testClock(startMs = 1_000_000) {
  let current = startMs;
  return { now: () => current, advance: (ms: number) => (current += ms), set: (ms: number) => (current = ms) };
}

const bucket = suite("token bucket");

bucket("a full bucket allows burst requests, then refuses with Retry-After", () => {
  const clock = testClock();
  const limiter = new TokenBucket({ rps: 2, burst: 3 }, clock);
  for (let i = 0; i < 3; i++) assert.equal(limiter.take(), { ok: true });
  assert.equal(limiter.take(), { ok: false, retryAfterSeconds: 1 });
});

bucket("tokens refill at rps and never beyond burst", () => {
  const clock = testClock();
  const limiter = new TokenBucket({ rps: 2, burst: 3 }, clock);
  for (let i = 0; i < 3; i++) limiter.take();
  clock.advance(499);
  assert.is(limiter.take().ok, false);
  clock.advance(1);
  assert.is(limiter.take().ok, true, "one token after 500 ms at 2 rps");
  assert.is(limiter.take().ok, false);
  clock.advance(60_000);
  assert.is(limiter.tokens, 3);
});

bucket("fractional rps gives a Retry-After of the full wait", () => {
  const clock = testClock();
  const limiter = new TokenBucket({ rps: 0.25, burst: 1 }, clock);
  assert.is(limiter.take().ok, true);
  assert.equal(limiter.take(), { ok: false, retryAfterSeconds: 4 });
  clock.advance(1_000);
  assert.equal(limiter.take(), { ok: false, retryAfterSeconds: 3 });
  clock.advance(3_000);
  assert.is(limiter.take().ok, true);
});

bucket("a clock stepping backwards neither refills nor drains", () => {
  const clock = testClock();
  const limiter = new TokenBucket({ rps: 1, burst: 2 }, clock);
  limiter.take();
  limiter.take();
  clock.advance(-10_000);
  assert.is(limiter.take().ok, false);
  clock.advance(10_000);
  assert.is(limiter.take().ok, false, "the lost interval is not credited twice");
  clock.advance(1_000);
  assert.is(limiter.take().ok, true);
});

bucket("invalid settings are refused", () => {
  const clock = testClock();
  assert.throws(() => new TokenBucket({ rps: 0, burst: 1 }, clock));
  assert.throws(() => new TokenBucket({ rps: 1, burst: 0 }, clock));
  assert.throws(() => new TokenBucket({ rps: 1, burst: 1.5 }, clock));
});

const registry = suite("rate limit registry");

registry("an unchanged bucket keeps its tokens across a reload; a changed one starts full", () => {
  const clock = testClock();
  const limits = new RateLimitRegistry(clock);
  limits.apply({ "/github": { rps: 1, burst: 2 }, "/stripe": { rps: 1, burst: 2 } });
  const github = limits.get("/github")!;
  github.take();
  github.take();
  limits.get("/stripe")!.take();
  limits.get("/stripe")!.take();

  limits.apply({ "/github": { rps: 1, burst: 2 }, "/stripe": { rps: 5, burst: 2 }, "/new": { rps: 1, burst: 1 } });
  assert.is(limits.get("/github"), github, "same bucket object");
  assert.is(limits.get("/github")!.take().ok, false, "still empty after the reload");
  assert.is(limits.get("/stripe")!.tokens, 2, "changed settings start full");
  assert.is(limits.get("/new")!.take().ok, true);
});

registry("a route removed by a reload loses its bucket; readding it starts full", () => {
  const clock = testClock();
  const limits = new RateLimitRegistry(clock);
  limits.apply(new Map([["/a", { rps: 1, burst: 1 }]]));
  limits.get("/a")!.take();
  limits.apply(new Map());
  assert.is(limits.get("/a"), undefined);
  assert.equal(limits.keys(), []);
  limits.apply(new Map([["/a", { rps: 1, burst: 1 }]]));
  assert.is(limits.get("/a")!.take().ok, true);
});

bucket.run();
registry.run();
