import { suite } from "uvu";
import * as assert from "uvu/assert";
import { classifyStatus, resultForStatus } from "../../runtime/delivery/classify.js";
import { decideSettlement } from "../../runtime/delivery/settle.js";
import { DEFAULTS } from "../../compiler/defaults.js";
import { nextDelay, retryAfterCapMs } from "../../runtime/delivery/retry.js";
import { parseRetryAfter } from "../../runtime/http/retry-after.js";

const defaultRetryPolicy = DEFAULTS.deliver.retry;

const backoff = suite("retry backoff");
const middle = () => 0.5; // U(−1,1) = 0: no jitter
const policy = { maxRetries: 8, baseMs: 2_000, capMs: 120_000, jitter: 0.2 };

backoff("defaults are max 8, base 2s, cap 2m, jitter 0.2", () => {
  assert.equal(defaultRetryPolicy, { maxRetries: 8, baseMs: 2_000, capMs: 120_000, jitter: 0.2 });
});

backoff("first retry waits base, then doubles until the cap", () => {
  const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => nextDelay(policy, attempt, middle));
  assert.equal(
    delays.map((d) => (d.retry ? d.delayMs : -1)),
    [2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 120_000, 120_000],
  );
});

backoff("jitter scales the delay by 1 ± jitter at the ends of the random range", () => {
  assert.equal(nextDelay(policy, 1, () => 0), { retry: true, delayMs: 1_600 });
  assert.equal(nextDelay(policy, 1, () => 0.999999999), { retry: true, delayMs: 2_400 });
  assert.equal(nextDelay(policy, 3, () => 0.75), { retry: true, delayMs: 8_800 });
});

backoff("max N allows N retries, so delivery N+1 failing is dead with max_retries", () => {
  const three = { ...policy, maxRetries: 3 };
  assert.ok(nextDelay(three, 3, middle).retry);
  assert.equal(nextDelay(three, 4, middle), { retry: false, deadReason: "max_retries" });
  assert.equal(nextDelay({ ...policy, maxRetries: 0 }, 1, middle), { retry: false, deadReason: "max_retries" });
});

backoff("a huge attempt number stays at the cap instead of overflowing", () => {
  assert.equal(nextDelay({ ...policy, maxRetries: 5000 }, 4000, middle), { retry: true, delayMs: 120_000 });
});

backoff("Retry-After longer than the backoff lengthens the wait", () => {
  assert.equal(nextDelay(policy, 1, middle, 30_000), { retry: true, delayMs: 30_000 });
});

backoff("Retry-After shorter than the backoff does not shorten it", () => {
  assert.equal(nextDelay(policy, 4, middle, 1_000), { retry: true, delayMs: 16_000 });
  assert.equal(nextDelay(policy, 1, middle, 0), { retry: true, delayMs: 2_000 });
});

backoff("Retry-After is capped at one hour", () => {
  assert.equal(retryAfterCapMs, 3_600_000);
  assert.equal(nextDelay(policy, 1, middle, 86_400_000), { retry: true, delayMs: 3_600_000 });
});

backoff("Retry-After does not revive an exhausted message", () => {
  assert.equal(nextDelay({ ...policy, maxRetries: 1 }, 2, middle, 5_000), { retry: false, deadReason: "max_retries" });
});

backoff.run();

const header = suite("Retry-After parsing");
const nowMs = Date.parse("2024-05-01T12:00:00Z");

header("delay-seconds become milliseconds", () => {
  assert.is(parseRetryAfter("120", nowMs), 120_000);
  assert.is(parseRetryAfter(" 0 ", nowMs), 0);
});

header("an HTTP-date becomes the time left until it", () => {
  assert.is(parseRetryAfter("Wed, 01 May 2024 12:01:30 GMT", nowMs), 90_000);
});

header("an HTTP-date in the past means no extra wait", () => {
  assert.is(parseRetryAfter("Wed, 01 May 2024 11:00:00 GMT", nowMs), 0);
});

header("absent or malformed values are ignored", () => {
  assert.is(parseRetryAfter(undefined, nowMs), undefined);
  assert.is(parseRetryAfter("", nowMs), undefined);
  assert.is(parseRetryAfter("-5", nowMs), undefined);
  assert.is(parseRetryAfter("1.5", nowMs), undefined);
  assert.is(parseRetryAfter("soon", nowMs), undefined);
  assert.is(parseRetryAfter("2024-05-01", nowMs), undefined);
});

header.run();

const classify = suite("attempt classification");

classify("2xx acks", () => {
  for (const status of [200, 201, 202, 204, 299]) assert.is(classifyStatus(status), "acked");
});

classify("5xx, 408 and 429 retry", () => {
  for (const status of [500, 502, 503, 504, 599, 408, 429]) assert.is(classifyStatus(status), "retry");
});

classify("every other status is final (no_retry), redirects included", () => {
  for (const status of [100, 301, 302, 304, 307, 400, 401, 403, 404, 405, 409, 410, 413, 422]) assert.is(classifyStatus(status), "no_retry");
  assert.equal(resultForStatus(400), { outcome: "dead", deadReason: "no_retry", statusCode: 400, error: "status 400" });
});

classify("a retryable status carries its Retry-After", () => {
  assert.equal(resultForStatus(429, 5_000), { outcome: "retry", statusCode: 429, error: "status 429", retryAfterMs: 5_000 });
});

classify.run();

const settlement = suite("settlement of an attempt");
const item = { id: "evt_1", attempt: 2 };

settlement("a retryable result within max is a nack with the backoff delay", () => {
  assert.equal(decideSettlement({ outcome: "retry", statusCode: 503, error: "status 503" }, policy, item, "/r", "https://t/x", middle), {
    outcome: "retry",
    delayMs: 4_000,
    attemptRecord: { eventId: "evt_1", route: "/r", target: "https://t/x", attempt: 2, statusCode: 503, error: "status 503", outcome: "retry" },
  });
});

settlement("a retryable result past max is dead with max_retries, recorded as dead", () => {
  const result = decideSettlement({ outcome: "retry", error: "ECONNREFUSED" }, { ...policy, maxRetries: 1 }, item, "/r", "t", middle);
  assert.equal(result, { outcome: "dead", deadReason: "max_retries", attemptRecord: { eventId: "evt_1", route: "/r", target: "t", attempt: 2, error: "ECONNREFUSED", outcome: "dead", deadReason: "max_retries" } });
});

settlement("a final result keeps its reason whatever the retry budget", () => {
  const result = decideSettlement({ outcome: "dead", deadReason: "policy_denied", error: "egress denied" }, policy, item, "/r", "t", middle);
  assert.is(result.outcome === "dead" && result.deadReason, "policy_denied");
});

settlement.run();
