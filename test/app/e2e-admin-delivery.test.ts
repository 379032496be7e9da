import { createHmac, createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

// The built `spool run` with the Admin API and push delivery mounted: a webhook pushed to a local
// receiver with retry and signing, the attempts visible through the Admin API, a management PUT
// that rewrites the Spoolfile keeping its comments, and audit lines on stderr.

interface Received {
  headers: IncomingMessage["headers"];
  body: Buffer;
  path: string;
}

const e2e = suite("spool run: admin API and push delivery end to end");
const tempDir = makeTempDir("admin-delivery");
const dir = tempDir.path;
const received: Received[] = [];
let answers: number[] = [];
let spool: SpoolProcess;
let base: ReturnType<typeof urls>;
let spoolfilePath: string;
const adminHeaders = { authorization: "Bearer admin-token", "content-type": "application/json", "x-spool-audit-reason": "e2e test" };

const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks), path: req.url ?? "" });
    res.statusCode = answers.shift() ?? 200;
    res.end();
  });
});

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${spool?.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

e2e.before(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const receiverPort = (receiver.address() as AddressInfo).port;
  const ports = await freePorts();
  base = urls(ports);
  const body = `# Routes of the admin/delivery e2e test.
defaults {
  egress {
    https_only off
    dns_rebind_protection off
  }
}

# Pushed to the local receiver, signed.
/hooks/orders {
  deliver "http://127.0.0.1:${receiverPort}/in" {
    retry exponential max 3 base 50ms cap 100ms jitter 0
    timeout 2s
    header "X-Team" "orders"
    sign hmac raw:push-secret
  }
}

/hooks/jobs {
  # pulled by workers
  pull { path /jobs }
}
`;
  spoolfilePath = writeSpoolfile(dir, spoolfileText(ports, body));
  spool = spawnSpool(["run", "--config", spoolfilePath, "--db", join(dir, "spool.db")]);
  await waitHealthy(spool, base.admin);
});

e2e.after(async () => {
  if (spool) await stopSpool(spool);
  receiver.close();
  tempDir.cleanup();
});

e2e("a pushed webhook that first gets 500 is delivered on attempt 2, signed, and both attempts are listed", async () => {
  answers = [500, 200];
  const payload = JSON.stringify({ order: 42 });
  const accepted = await fetch(`${base.ingress}/hooks/orders`, { method: "POST", body: payload, headers: { "content-type": "application/json" } });
  assert.is(accepted.status, 202);
  const { ids } = (await accepted.json()) as { ids: string[] };
  await until(async () => (received.length >= 2 ? true : undefined), "two deliveries");
  const [first, second] = received;
  assert.is(second.body.toString(), payload);
  assert.is(second.headers["content-type"], "application/json");
  assert.is(second.headers["x-team"], "orders");
  assert.is(second.headers["x-spool-message-id"], ids[0]);
  assert.equal([first.headers["x-spool-attempt"], second.headers["x-spool-attempt"]], ["1", "2"]);
  const timestamp = String(second.headers["x-spool-timestamp"]);
  const expected = createHmac("sha256", "push-secret").update(`POST\n/in\n${timestamp}\n${createHash("sha256").update(payload).digest("hex")}`).digest("hex");
  assert.is(second.headers["x-spool-signature"], expected);

  const attempts = await until(async () => {
    const res = await fetch(`${base.admin}/attempts?route=/hooks/orders`, { headers: adminHeaders });
    const list = (await res.json()) as { items: { outcome: string; status_code?: number; attempt?: number }[] };
    return list.items.length >= 2 ? list.items : undefined;
  }, "two attempt records");
  assert.equal(attempts.map((a) => [a.outcome, a.status_code]), [["acked", 200], ["retry", 500]]);
});

e2e("a 400 from the target is dead at once with no_retry, visible in the DLQ", async () => {
  received.length = 0;
  answers = [400];
  const accepted = await fetch(`${base.ingress}/hooks/orders`, { method: "POST", body: "bad" });
  const { ids } = (await accepted.json()) as { ids: string[] };
  const dead = await until(async () => {
    const res = await fetch(`${base.admin}/dlq?route=/hooks/orders`, { headers: adminHeaders });
    const list = (await res.json()) as { items: { id: string; dead_reason: string }[] };
    return list.items.find((i) => i.id === ids[0]);
  }, "the dead item");
  assert.is(dead.dead_reason, "no_retry");
  assert.is(received.length, 1);
});

e2e("admin reads take their filters from the query string: route and limit narrow, an unknown parameter is 400", async () => {
  const read = async (query: string) => {
    const res = await fetch(`${base.admin}/attempts${query}`, { headers: adminHeaders });
    return { status: res.status, body: (await res.json()) as { items?: unknown[]; code?: string } };
  };
  const all = await read("");
  assert.ok((all.body.items ?? []).length >= 3, "the earlier tests left attempts of /hooks/orders");
  assert.equal((await read("?route=/hooks/jobs")).body.items, [], "no attempts on the pulled route");
  assert.is((await read("?route=/hooks/orders&limit=1")).body.items?.length, 1);
  const typo = await read("?limt=5");
  assert.equal([typo.status, typo.body.code], [400, "invalid_query"]);
});

e2e("management PUT maps an endpoint, keeps the Spoolfile's comments, and the mapping is live at once", async () => {
  const before = readFileSync(spoolfilePath, "utf8");
  const put = await fetch(`${base.admin}/applications/shop/endpoints/jobs`, { method: "PUT", headers: adminHeaders, body: JSON.stringify({ route: "/hooks/jobs" }) });
  assert.is(put.status, 200, await put.clone().text());
  const answer = (await put.json()) as { applied: boolean; action: string };
  assert.equal([answer.applied, answer.action], [true, "created"]);
  const after = readFileSync(spoolfilePath, "utf8");
  assert.ok(after.includes("# pulled by workers") && after.includes("# Pushed to the local receiver, signed."));
  assert.equal(after.split("\n").filter((l) => !before.split("\n").includes(l)).map((l) => l.trim()), ['application "shop"', 'endpoint_name "jobs"']);
  assert.ok(compileSpoolfile(after, spoolfilePath).config, "the rewritten file still validates");
  const endpoint = await fetch(`${base.admin}/applications/shop/endpoints/jobs`, { headers: adminHeaders });
  assert.is(endpoint.status, 200);
  assert.is(((await endpoint.json()) as { route: string }).route, "/hooks/jobs");
});

e2e("every admin mutation writes one audit line with tool and input_hash", async () => {
  const cancel = await fetch(`${base.admin}/messages/cancel`, { method: "POST", headers: adminHeaders, body: JSON.stringify({ ids: ["evt_0000000000000000"] }) });
  assert.is(cancel.status, 200);
  const audit = await until(async () => {
    const lines = spool.output().split("\n").filter((l) => l.includes('"tool"') && l.includes('"input_hash"'));
    return lines.find((l) => l.includes("messages_cancel"));
  }, "the audit line");
  const record = JSON.parse(audit.slice(audit.indexOf("{"))) as { tool: string; input_hash: string; result: string; metadata: { kind: string } };
  assert.is(record.tool, "messages_cancel");
  assert.match(record.input_hash, /^sha256:[0-9a-f]{64}$/);
  assert.is(record.metadata.kind, "id_mutation");
});

e2e("a mutation without the audit reason is refused with 400 audit_reason_required", async () => {
  const res = await fetch(`${base.admin}/messages/cancel`, { method: "POST", headers: { authorization: "Bearer admin-token", "content-type": "application/json" }, body: JSON.stringify({ ids: ["evt_0000000000000000"] }) });
  assert.is(res.status, 400);
  assert.is(((await res.json()) as { code: string }).code, "audit_reason_required");
});

e2e.run();
