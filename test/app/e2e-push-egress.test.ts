import { mkdirSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { attemptsOf, postWebhook, startReceiver, waitForAttempts, waitForDead, type Receiver } from "./helpers/delivery.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

// The egress policy and push retries through the built `spool run` (docs/decisions.md D34, D36):
// with the secure defaults every loopback, link-local and IPv6 spelling of a local address is dead
// `policy_denied` before any connection is made; an `allow` rule opens 127.0.0.1; a redirect is not
// followed while `redirects` is off; a hanging receiver is retried after the deliver timeout and a
// Retry-After is honoured.

const tmp = makeTempDir("push-egress");
process.on("exit", () => tmp.cleanup());

/** Receivers that must never see a connection while the defaults apply (and the redirect's target). */
let v4: Receiver;
let v6: Receiver;

async function startSpool(name: string, body: string): Promise<{ spool: SpoolProcess; base: ReturnType<typeof urls> }> {
  const ports = await freePorts();
  const base = urls(ports);
  const dir = join(tmp.path, name);
  mkdirSync(dir);
  const spool = spawnSpool(["run", "--config", writeSpoolfile(dir, spoolfileText(ports, body)), "--db", join(dir, "spool.db")]);
  await waitHealthy(spool, base.admin);
  return { spool, base };
}

// ---------------------------------------------------------------------------------------------
// The secure defaults: https_only on, dns_rebind_protection on, redirects off, no allow rules.

const defaults = suite("spool run, default egress: local targets are dead policy_denied without a connection");
let secure: { spool: SpoolProcess; base: ReturnType<typeof urls> };

defaults.before(async () => {
  v4 = await startReceiver("127.0.0.1");
  v6 = await startReceiver("::1");
  // https:// targets, so it is the address rule (not https_only) that must refuse them. Each URL
  // comes through a placeholder: a literal one the policy refuses is a compile error
  // (test/compiler/deliver-egress.test.ts), and these test the refusal at delivery time.
  secure = await startSpool(
    "defaults",
    `
vars {
  LOOPBACK "https://127.0.0.1:${v4.port}/in"
  PLAIN "${v4.url("/in")}"
  METADATA "https://169.254.169.254/latest/meta-data/"
  IPV6_LOOPBACK "https://[::1]:${v6.port}/in"
  IPV4_MAPPED "https://[::ffff:127.0.0.1]:${v4.port}/in"
}
/hooks/loopback { deliver "{vars.LOOPBACK}" }
/hooks/plain { deliver "{vars.PLAIN}" }
/hooks/metadata { deliver "{vars.METADATA}" }
/hooks/ipv6-loopback { deliver "{vars.IPV6_LOOPBACK}" }
/hooks/ipv4-mapped { deliver "{vars.IPV4_MAPPED}" }
/hooks/localhost { deliver "https://localhost:${v4.port}/in" }
`,
  );
});

defaults.after(async () => {
  await stopSpool(secure.spool);
});

/** Posts one webhook to `route` and returns its single dead attempt once it is in the DLQ. */
async function deniedAttempt(route: string) {
  const [id] = await postWebhook(secure.base.ingress, route, '{"n":1}', { "content-type": "application/json" });
  const dead = await waitForDead(secure.base.admin, route, id);
  assert.is(dead.dead_reason, "policy_denied");
  const attempts = await attemptsOf(secure.base.admin, route, id);
  assert.is(attempts.length, 1, "a refusal is never retried");
  assert.is(attempts[0].outcome, "dead");
  assert.is(attempts[0].dead_reason, "policy_denied");
  assert.is(attempts[0].status_code, undefined);
  return attempts[0];
}

function assertNoConnection(): void {
  assert.is(v4.connections(), 0, "nothing connected to the 127.0.0.1 receiver");
  assert.is(v6.connections(), 0, "nothing connected to the ::1 receiver");
}

defaults("a loopback IP target is refused by dns_rebind_protection", async () => {
  const attempt = await deniedAttempt("/hooks/loopback");
  assert.match(attempt.error ?? "", /127\.0\.0\.1 .*is loopback/);
  assertNoConnection();
});

defaults("a plain http target is refused by https_only, and the runtime log says so at its default level", async () => {
  const attempt = await deniedAttempt("/hooks/plain");
  assert.match(attempt.error ?? "", /https_only is on/);
  assertNoConnection();
  await secure.spool.waitForOutput('"msg":"delivery_dead"');
  const dead = secure.spool
    .output()
    .split("\n")
    .filter((line) => line.includes('"msg":"delivery_dead"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.route === "/hooks/plain");
  assert.ok(dead, "a delivery_dead line for /hooks/plain");
  // The target as the Spoolfile writes it: a URL from vars is not expanded in the log (docs/delivery.md).
  assert.equal([dead.level, dead.target, dead.attempts, dead.dead_reason], ["warn", "{vars.PLAIN}", 1, "policy_denied"]);
  assert.match(String(dead.error), /https_only is on/);
});

defaults("the link-local metadata address 169.254.169.254 is refused", async () => {
  const attempt = await deniedAttempt("/hooks/metadata");
  assert.match(attempt.error ?? "", /169\.254\.169\.254 .*is link_local/);
});

defaults("IPv6 loopback [::1] is refused", async () => {
  const attempt = await deniedAttempt("/hooks/ipv6-loopback");
  assert.match(attempt.error ?? "", /::1 .*is loopback/);
  assertNoConnection();
});

defaults("the IPv4-mapped spelling [::ffff:127.0.0.1] is refused as 127.0.0.1", async () => {
  const attempt = await deniedAttempt("/hooks/ipv4-mapped");
  assert.match(attempt.error ?? "", /address 127\.0\.0\.1 .*is loopback/);
  assertNoConnection();
});

defaults("a host name that resolves to a loopback address (localhost) is refused at connect time", async () => {
  const attempt = await deniedAttempt("/hooks/localhost");
  assert.match(attempt.error ?? "", /egress denied: address (127\.0\.0\.1|::1) of localhost is loopback/);
  assertNoConnection();
});

// ---------------------------------------------------------------------------------------------
// An allow rule for 127.0.0.1 with https_only off: delivered; redirects stay off; retries.

const allowed = suite("spool run, egress allow 127.0.0.1: delivered, redirects not followed, timeouts and Retry-After");
let open: { spool: SpoolProcess; base: ReturnType<typeof urls> };
/** How the allowed receiver answers each path, in order; missing answers are 200. */
const plan = new Map<string, ((res: ServerResponse) => void)[]>();
let receiver: Receiver;

allowed.before(async () => {
  receiver = await startReceiver("127.0.0.1", (request, res) => {
    const answer = plan.get(request.path)?.shift();
    if (answer) answer(res);
    else res.end("ok");
  });
  open = await startSpool(
    "allowed",
    `
defaults {
  egress {
    allow 127.0.0.1
    https_only off
  }
}
vars {
  # Through a placeholder, so the refusal is tested at delivery (a literal one is a compile error).
  IPV6 "${v6.url("/in")}"
}
/hooks/allowed { deliver "${receiver.url("/allowed")}" }
/hooks/redirect { deliver "${receiver.url("/redirect")}" }
/hooks/ipv6 { deliver "{vars.IPV6}" }
/hooks/slow {
  deliver "${receiver.url("/slow")}" {
    timeout 300ms
    retry exponential max 3 base 50ms cap 50ms jitter 0
  }
}
/hooks/busy {
  deliver "${receiver.url("/busy")}" {
    retry exponential max 3 base 50ms cap 50ms jitter 0
  }
}
`,
  );
});

allowed.after(async () => {
  await stopSpool(open.spool);
  await receiver.close();
  await v4.close();
  await v6.close();
});

allowed("an allowed loopback target is delivered over plain http", async () => {
  const [id] = await postWebhook(open.base.ingress, "/hooks/allowed", '{"order":7}', { "content-type": "application/json" });
  const [attempt] = await waitForAttempts(open.base.admin, "/hooks/allowed", id, 1, "the delivery");
  assert.equal([attempt.outcome, attempt.status_code], ["acked", 200]);
  const delivered = receiver.requests.find((r) => r.headers["x-spool-message-id"] === id);
  assert.ok(delivered, "the receiver got the message");
  assert.is(delivered!.body.toString(), '{"order":7}');
});

allowed("an address the allow list does not name (::1) is still policy_denied", async () => {
  const [id] = await postWebhook(open.base.ingress, "/hooks/ipv6", "x");
  const dead = await waitForDead(open.base.admin, "/hooks/ipv6", id);
  assert.is(dead.dead_reason, "policy_denied");
  assert.is(v6.connections(), 0);
});

allowed("a 302 to a denied address is not followed while redirects are off: dead no_retry with status 302", async () => {
  const stolen = v6.url("/stolen");
  plan.set("/redirect", [(res) => res.writeHead(302, { location: stolen }).end()]);
  const [id] = await postWebhook(open.base.ingress, "/hooks/redirect", "secret payload");
  const dead = await waitForDead(open.base.admin, "/hooks/redirect", id);
  assert.is(dead.dead_reason, "no_retry", "a followed redirect would have been policy_denied");
  const attempts = await attemptsOf(open.base.admin, "/hooks/redirect", id);
  assert.equal(
    attempts.map((a) => [a.outcome, a.status_code]),
    [["dead", 302]],
  );
  assert.is(v6.connections(), 0, "the redirect target was never contacted");
});

allowed("a receiver that hangs is retried after the deliver timeout", async () => {
  // First request: never answered. Second: 200.
  plan.set("/slow", [() => {}]);
  const [id] = await postWebhook(open.base.ingress, "/hooks/slow", "slow");
  const attempts = await waitForAttempts(open.base.admin, "/hooks/slow", id, 2, "two attempts");
  assert.equal(
    attempts.map((a) => [a.attempt, a.outcome, a.status_code]),
    [
      [1, "retry", undefined],
      [2, "acked", 200],
    ],
  );
  assert.match(attempts[0].error ?? "", /timeout after 300 ms/);
  const seen = receiver.requests.filter((r) => r.headers["x-spool-message-id"] === id).map((r) => r.headers["x-spool-attempt"]);
  assert.equal(seen, ["1", "2"]);
});

allowed("Retry-After lengthens the wait beyond the 50 ms backoff", async () => {
  plan.set("/busy", [(res) => res.writeHead(503, { "retry-after": "1" }).end()]);
  const [id] = await postWebhook(open.base.ingress, "/hooks/busy", "busy");
  const attempts = await waitForAttempts(open.base.admin, "/hooks/busy", id, 2, "two attempts");
  assert.equal(
    attempts.map((a) => [a.outcome, a.status_code]),
    [
      ["retry", 503],
      ["acked", 200],
    ],
  );
  const [first, second] = receiver.requests.filter((r) => r.headers["x-spool-message-id"] === id);
  // A lower bound only: the retry must not come before the receiver's Retry-After (1 s), whereas
  // the route's own schedule alone would have retried after 50 ms.
  assert.ok(second.atMs - first.atMs >= 950, `second attempt came ${Math.round(second.atMs - first.atMs)} ms after the first`);
});

defaults.run();
allowed.run();
