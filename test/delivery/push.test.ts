import { createHash, createHmac } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createEgressAgent } from "../../runtime/delivery/egress.js";
import { deliverHttp, type PushInput } from "../../runtime/delivery/push.js";
import { createSigner } from "../../runtime/delivery/sign.js";
import { HMAC_SIGNING, localEgress, startReceiver, WEBHOOKS_SIGNING, type Handler, type Receiver } from "./helpers.js";

const push = suite("http push attempt");
const body = Buffer.concat([Buffer.from('{"order":7,"note":"caf\u00e9"}'), Buffer.from([0x00, 0xff, 0x0a])]);

async function withReceiver(handler: Handler | undefined, run: (receiver: Receiver, send: (overrides?: Partial<PushInput>) => ReturnType<typeof deliverHttp>) => Promise<void>): Promise<void> {
  const receiver = await startReceiver(handler);
  const agent = createEgressAgent(localEgress);
  const send = (overrides: Partial<PushInput> = {}) =>
    deliverHttp({ url: `${receiver.url}/hooks/in?x=1`, body, headers: { "Content-Type": "application/json" }, messageId: "evt_abc", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: localEgress, ...overrides });
  try {
    await run(receiver, send);
  } finally {
    await agent.close();
    await receiver.close();
  }
}

push("the receiver gets a POST with the exact stored body and headers", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    const result = await send({
      headers: { "Content-Type": "application/json; charset=utf-8", "X-GitHub-Event": "push", "User-Agent": "GitHub-Hookshot/1" },
      attempt: 3,
    });
    assert.equal(result, { outcome: "acked", statusCode: 200 });
    const [req] = receiver.requests;
    assert.is(req.method, "POST");
    assert.is(req.path, "/hooks/in?x=1");
    assert.ok(req.body.equals(body), "body bytes identical");
    assert.is(req.headers["content-type"], "application/json; charset=utf-8");
    assert.is(req.headers["x-github-event"], "push");
    assert.is(req.headers["user-agent"], "GitHub-Hookshot/1");
    assert.is(req.headers["x-spool-message-id"], "evt_abc");
    assert.is(req.headers["x-spool-attempt"], "3");
    assert.is(req.headers["content-length"], String(body.length));
  });
});

push("stored hop-by-hop and framing headers are not forwarded", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    const result = await send({
      headers: { "Content-Type": "text/plain", "Content-Length": "99999", Host: "evil.example", Connection: "close, x-drop", "Transfer-Encoding": "chunked", "Keep-Alive": "timeout=5", Upgrade: "websocket", TE: "trailers", Expect: "100-continue" },
    });
    assert.is(result.outcome, "acked");
    const [req] = receiver.requests;
    assert.is(req.headers["content-length"], String(body.length));
    assert.is(req.headers.host, `127.0.0.1:${receiver.port}`);
    assert.is(req.headers["transfer-encoding"], undefined);
    assert.is(req.headers.upgrade, undefined);
    assert.is(req.headers["keep-alive"], undefined);
    assert.is(req.headers.expect, undefined);
    assert.ok(req.body.equals(body));
  });
});

push("a sender's own X-Spool-* headers are not forwarded (a forged signature never reaches the target)", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    await send({ headers: { "content-type": "application/json", "X-Spool-Signature": "forged", "x-spool-timestamp": "1", "X-Spoolish": "kept" } });
    const [req] = receiver.requests;
    assert.is(req.headers["x-spool-signature"], undefined);
    assert.is(req.headers["x-spool-timestamp"], undefined);
    assert.is(req.headers["x-spoolish"], "kept");
  });
});

push("a redirect to another origin gets neither the target's header values nor a signature", async () => {
  const other = await startReceiver();
  try {
    await withReceiver(
      (req, res) => {
        res.statusCode = 307;
        res.setHeader("location", req.path.startsWith("/hooks/in") ? `http://localhost:${other.port}/landing` : "/unused");
        res.end();
      },
      async (receiver, send) => {
        const redirecting = { ...localEgress, redirects: true };
        const signer = createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "topsecret" }] });
        const agent = createEgressAgent(redirecting);
        try {
          const result = await send({ egress: redirecting, dispatcher: agent, signer, extraHeaders: { Authorization: "Bearer downstream-secret", "X-Api-Key": "k" }, headers: { "content-type": "text/plain" } });
          assert.is(result.outcome, "acked");
        } finally {
          await agent.close();
        }
        const [first] = receiver.requests;
        assert.is(first.headers.authorization, "Bearer downstream-secret", "the target itself gets its headers");
        assert.ok(first.headers["x-spool-signature"]);
        const [landed] = other.requests;
        assert.is(landed.headers.authorization, undefined);
        assert.is(landed.headers["x-api-key"], undefined);
        assert.is(landed.headers["x-spool-signature"], undefined);
        assert.is(landed.headers["content-type"], "text/plain", "the message's own headers still go");
        assert.is(landed.headers["x-spool-message-id"], "evt_abc");
      },
    );
  } finally {
    await other.close();
  }
});

push("target headers replace stored ones; Spool's own headers cannot be overridden by either", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    await send({
      headers: { "content-type": "application/json", "X-Tenant": "from-ingress", "X-Spool-Attempt": "999" },
      extraHeaders: { "X-Tenant": "from-config", "X-Extra": "yes", "x-spool-message-id": "forged" },
    });
    const [req] = receiver.requests;
    assert.is(req.headers["x-tenant"], "from-config");
    assert.is(req.headers["x-extra"], "yes");
    assert.is(req.headers["x-spool-message-id"], "evt_abc");
    assert.is(req.headers["x-spool-attempt"], "1");
    // One header each, never both the stored and the configured copy.
    assert.is(req.rawHeaders.filter((h) => h.toLowerCase() === "x-tenant").length, 1);
  });
});

push("the signature verifies at the receiver with an independent implementation", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    const nowMs = 1_714_564_800_500;
    await send({ signer: createSigner({ ...HMAC_SIGNING, mode: "hmac", secrets: [{ value: "topsecret" }] }), nowMs });
    const [req] = receiver.requests;
    const timestamp = req.headers["x-spool-timestamp"] as string;
    assert.is(timestamp, "1714564800");
    const path = req.path.split("?")[0];
    const canonical = `${req.method}\n${path}\n${timestamp}\n${createHash("sha256").update(req.body).digest("hex")}`;
    assert.is(req.headers["x-spool-signature"], createHmac("sha256", "topsecret").update(canonical).digest("hex"));
  });
});

push("standard webhooks headers verify at the receiver", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    const key = Buffer.from("standard-webhooks-key-bytes-0001");
    await send({ signer: createSigner({ ...WEBHOOKS_SIGNING, mode: "standard_webhooks", secrets: [{ value: `whsec_${key.toString("base64")}` }] }), nowMs: 1_700_000_000_000 });
    const [req] = receiver.requests;
    assert.is(req.headers["webhook-id"], "evt_abc");
    assert.is(req.headers["webhook-timestamp"], "1700000000");
    const expected = createHmac("sha256", key).update(`evt_abc.1700000000.`).update(req.body).digest("base64");
    assert.is(req.headers["webhook-signature"], `v1,${expected}`);
  });
});

push("statuses map to outcomes: 5xx/408/429 retry, other 4xx dead, 2xx acked", async () => {
  let status = 200;
  await withReceiver((_req, res) => res.writeHead(status).end(), async (_receiver, send) => {
    const seen: Record<number, string> = {};
    for (const code of [200, 204, 500, 503, 408, 429, 400, 404, 410]) {
      status = code;
      const result = await send();
      seen[code] = result.outcome === "dead" ? `dead:${result.deadReason}` : result.outcome;
    }
    assert.equal(seen, { 200: "acked", 204: "acked", 500: "retry", 503: "retry", 408: "retry", 429: "retry", 400: "dead:no_retry", 404: "dead:no_retry", 410: "dead:no_retry" });
  });
});

push("Retry-After on a retryable answer is reported", async () => {
  await withReceiver((_req, res) => res.writeHead(429, { "retry-after": "120" }).end(), async (_receiver, send) => {
    const result = await send();
    assert.equal(result, { outcome: "retry", statusCode: 429, error: "status 429", retryAfterMs: 120_000 });
  });
});

push("a hanging receiver is a retry after the timeout", async () => {
  await withReceiver(() => {}, async (receiver, send) => {
    const result = await send({ timeoutMs: 200 });
    assert.is(result.outcome, "retry");
    assert.match(result.outcome === "retry" ? result.error ?? "" : "", /timeout after 200 ms/);
    assert.is(receiver.requests.length, 1);
  });
});

push("a refused connection is a retry", async () => {
  const receiver = await startReceiver();
  const url = `${receiver.url}/gone`;
  await receiver.close();
  const agent = createEgressAgent(localEgress);
  try {
    const result = await deliverHttp({ url, body, headers: {}, messageId: "m", attempt: 1, timeoutMs: 2_000, dispatcher: agent, egress: localEgress });
    assert.is(result.outcome, "retry");
    assert.match(result.outcome === "retry" ? result.error ?? "" : "", /ECONNREFUSED/);
  } finally {
    await agent.close();
  }
});

push("a large response body is cut off, not read to the end", async () => {
  await withReceiver(
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      // An endless body: only a bounded drain lets this attempt finish.
      const pump = () => {
        while (res.write(chunk)) {}
        res.once("drain", pump);
      };
      res.on("close", () => res.removeAllListeners("drain"));
      pump();
    },
    async (_receiver, send) => {
      const result = await send({ timeoutMs: 10_000, maxResponseBytes: 128 * 1024 });
      assert.equal(result, { outcome: "acked", statusCode: 200 });
    },
  );
});

push("an aborted signal throws instead of returning an outcome", async () => {
  await withReceiver(() => {}, async (_receiver, send) => {
    const controller = new AbortController();
    const pending = send({ signal: controller.signal, timeoutMs: 10_000 });
    setTimeout(() => controller.abort(), 50);
    try {
      await pending;
      assert.unreachable("should have thrown");
    } catch (error) {
      assert.is((error as Error).name, "AbortError");
    }
  });
});

push("https_only refuses a plain http target without sending anything", async () => {
  await withReceiver(undefined, async (receiver, send) => {
    const strict = { ...localEgress, httpsOnly: true };
    const result = await send({ egress: strict });
    assert.equal(result, { outcome: "dead", deadReason: "policy_denied", error: "egress denied: https_only is on" });
    assert.is(receiver.requests.length, 0);
  });
});

push.run();
