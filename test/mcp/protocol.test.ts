// `spool mcp serve` without a running instance: the stdio protocol (initialize, ping, JSON-RPC
// errors), tools/list per role and flag, the access order with its audit lines, strict arguments,
// the config tools with every credential of the file redacted, and config_apply's write modes.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { expectedHash, McpClient } from "./mcp-client.js";

const temp = makeTempDir("mcp-protocol");
const test = suite("spool mcp serve: protocol, access, arguments, config tools");

const SECRETS = ["admin-secret-token-1", "vars-secret-value-2", "basic-password-3", "match-header-secret-4", "url-password-5", "query-secret-6", "deliver-header-secret-7", "hmac-secret-8", "exec-env-secret-9", "pull-secret-10"];
const SPOOLFILE = `ingress { listen 127.0.0.1:18081 }
admin_api { listen 127.0.0.1:18082; auth token raw:${SECRETS[0]} }
pull_api { listen 127.0.0.1:18083; auth token raw:${SECRETS[9]} }
vars { HOOK_KEY ${SECRETS[1]} }
/hooks/a {
  auth basic "alice" "${SECRETS[2]}"
  match { header "X-Key" "${SECRETS[3]}" }
  deliver "https://example.com/in?token=${SECRETS[5]}" {
    header "X-Auth" "${SECRETS[6]}"
  }
}
/hooks/b {
  auth hmac raw:${SECRETS[7]}
  deliver exec "/bin/true" { env SECRET_ENV ${SECRETS[8]} }
}
/hooks/c {
  application "shop"
  endpoint_name "orders"
  pull { path /c }
}
`;
const configPath = join(temp.path, "Spoolfile");
const dbPath = join(temp.path, "absent.db");
const base = ["--config", configPath, "--db", dbPath, "--pid-file", join(temp.path, "spool.pid")];

const READ_TOOLS = [
  "admin_health",
  "attempts_list",
  "backlog_aging_summary",
  "backlog_oldest_queued",
  "backlog_top_queued",
  "backlog_trends",
  "config_compile",
  "config_diff",
  "config_fmt_preview",
  "config_parse",
  "config_validate",
  "dlq_list",
  "management_model",
  "messages_list",
];
const OPERATE_MUTATIONS = [
  "dlq_delete",
  "dlq_requeue",
  "messages_cancel",
  "messages_cancel_by_filter",
  "messages_publish",
  "messages_requeue",
  "messages_requeue_by_filter",
  "messages_resume",
  "messages_resume_by_filter",
];
const ADMIN_MUTATIONS = ["config_apply", "management_endpoint_delete", "management_endpoint_upsert", "rotate_secret"];

let read: McpClient;

test.before(async () => {
  writeFileSync(configPath, SPOOLFILE);
  read = await McpClient.session(base);
});

test.after(async () => {
  await read.close();
  temp.cleanup();
});

function assertNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) assert.not.ok(text.includes(secret), `${where} shows ${secret}: ${text.slice(0, 400)}`);
}

test("initialize echoes a supported protocol version and answers 2025-06-18 for any other", async () => {
  for (const [asked, answered] of [
    ["2024-11-05", "2024-11-05"],
    ["2025-03-26", "2025-03-26"],
    ["2025-06-18", "2025-06-18"],
    ["2025-11-25", "2025-06-18"],
    ["1999-01-01", "2025-06-18"],
  ]) {
    const reply = await read.request("initialize", { protocolVersion: asked, capabilities: {}, clientInfo: { name: "t", version: "1" } });
    assert.equal(reply.result?.protocolVersion, answered, asked);
    assert.equal(reply.result?.capabilities, { tools: { listChanged: false } });
    assert.equal((reply.result?.serverInfo as { name: string }).name, "spool");
  }
});

test("JSON-RPC: ping, unknown method -32601, non-JSON -32700 with id null, non-requests -32600, notifications unanswered", async () => {
  assert.equal((await read.request("ping")).result, {});
  assert.equal((await read.request("resources/list")).error?.code, -32601);
  const before = read.unsolicited.length;
  read.notify("notifications/whatever");
  read.writeLine("this is not json");
  read.writeLine("[1,2]");
  read.writeLine(JSON.stringify({ jsonrpc: "1.0", id: 77, method: "ping" }));
  read.writeLine(JSON.stringify({ jsonrpc: "2.0", id: 78 }));
  assert.equal((await read.request("ping")).result, {});
  const replies = read.unsolicited.slice(before);
  assert.equal(replies.length, 4, JSON.stringify(replies));
  assert.equal([replies[0].id, replies[0].error?.code], [null, -32700]);
  assert.equal([replies[1].id, replies[1].error?.code], [null, -32600]);
  assert.equal([replies[2].id, replies[2].error?.code], [77, -32600]);
  assert.equal(replies[3].error?.code, -32600);
});

test("requests before initialize are served; stdin's end exits 0", async () => {
  const client = McpClient.start(base);
  const reply = await client.request("tools/list");
  assert.ok(Array.isArray(reply.result?.tools));
  assert.is(await client.close(), 0);
});

test("tools/list holds exactly what the role and flags allow, each schema strict", async () => {
  assert.equal(await read.toolNames(), READ_TOOLS);
  const sessions: [string[], string[]][] = [
    [["--role", "operate"], READ_TOOLS],
    [["--role", "operate", "--enable-mutations"], READ_TOOLS],
    [["--role", "operate", "--enable-mutations", "--principal", "ops"], [...READ_TOOLS, ...OPERATE_MUTATIONS]],
    [["--role", "admin", "--enable-mutations", "--principal", "ops"], [...READ_TOOLS, ...OPERATE_MUTATIONS, ...ADMIN_MUTATIONS]],
    [["--role", "operate", "--enable-runtime-control"], [...READ_TOOLS, "instance_logs_tail", "instance_status"]],
    [["--role", "admin", "--enable-runtime-control", "--principal", "ops"], [...READ_TOOLS, "instance_logs_tail", "instance_reload", "instance_start", "instance_status", "instance_stop"]],
    [["--enable-mutations", "--enable-runtime-control", "--principal", "ops"], READ_TOOLS],
  ];
  for (const [flags, expected] of sessions) {
    const client = await McpClient.session([...base, ...flags]);
    assert.equal(await client.toolNames(), [...expected].sort(), flags.join(" "));
    const tools = ((await client.request("tools/list")).result!.tools as { inputSchema: { type: string; additionalProperties: unknown } }[]);
    for (const tool of tools) assert.equal([tool.inputSchema.type, tool.inputSchema.additionalProperties], ["object", false]);
    await client.close();
  }
});

test("a name that is no Spool tool is JSON-RPC -32602 naming it; a known tool not allowed is a tool error", async () => {
  const reply = await read.request("tools/call", { name: "drop_everything", arguments: {} });
  assert.is(reply.error?.code, -32602);
  assert.is(reply.error!.message, 'unknown tool "drop_everything": not a Spool tool');
  const denied = await read.call("dlq_requeue", { ids: ["a"], reason: "r" });
  assert.ok(denied.isError);
});

test("access is checked in order flag, role, principal, before arguments; each refusal audited as denied", async () => {
  const flagOff = await McpClient.session([...base, "--role", "admin", "--principal", "ops"]);
  const byFlag = await flagOff.call("dlq_requeue", { bogus: 1 });
  assert.match(byFlag.text, /--enable-mutations/);
  assert.match((await flagOff.call("instance_stop", { reason: "x" })).text, /--enable-runtime-control/);
  await flagOff.close();

  const lowRole = await McpClient.session([...base, "--role", "read", "--enable-mutations", "--principal", "ops"]);
  const byRole = await lowRole.call("dlq_requeue", { bogus: 1 });
  assert.match(byRole.text, /operate/);
  assert.match(byRole.text, /read/);
  await lowRole.close();
  const [line] = lowRole.auditLines();
  assert.equal([line.tool, line.result, line.role, line.principal, line.metadata], ["dlq_requeue", "denied", "read", "ops", { kind: "refused", operation: "dlq_requeue" }]);
  assert.is(line.input_hash, expectedHash({ bogus: 1 }));

  const noPrincipal = await McpClient.session([...base, "--role", "operate", "--enable-mutations"]);
  assert.match((await noPrincipal.call("messages_cancel", { ids: ["x"], reason: "r" })).text, /--principal/);
  await noPrincipal.close();
  assert.equal(noPrincipal.auditLines().map((l) => l.result), ["denied"]);
});

test("arguments: unknown key, wrong type, missing key, bad route, bad label and mixed selectors are tool errors naming the key", async () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["dlq_list", { limt: 5 }, /"limt"/],
    ["dlq_list", { limit: "5" }, /"limit".*integer/],
    ["dlq_list", { limit: 0 }, /"limit"/],
    ["messages_list", { route: "hooks" }, /"route".*"\/"/],
    ["messages_list", { route: "/a", application: "shop", endpoint_name: "orders" }, /"route"/],
    ["messages_list", { application: "shop" }, /"endpoint_name"/],
    ["messages_list", { application: "bad label!", endpoint_name: "x" }, /"application"/],
    ["messages_list", { before: "yesterday" }, /"before"/],
    ["config_diff", {}, /"content"/],
    ["admin_health", { x: true }, /"x"/],
    ["backlog_aging_summary", { states: ["queued", "gone"] }, /"states\[1\]"/],
  ];
  for (const [tool, args, pattern] of cases) {
    const reply = await read.call(tool, args);
    assert.ok(reply.isError, `${tool} ${JSON.stringify(args)}`);
    assert.match(reply.text, pattern, `${tool} ${JSON.stringify(args)}: ${reply.text}`);
  }
});

test("queue tools without the database file: store unavailable, never created", async () => {
  const reply = await read.call("messages_list", {});
  assert.ok(reply.isError);
  assert.match(reply.text, /store unavailable/);
  const health = await read.ok("admin_health");
  assert.equal([health.config_readable, health.db_exists, health.db_readable, health.ok], [true, false, false, false]);
  assert.throws(() => readFileSync(dbPath));
});

test("config tools redact every credential of the file (ast, formatted, diff, summary, diagnostics)", async () => {
  const outputs: string[] = [];
  const parse = await read.ok("config_parse", { path: configPath });
  assert.is(parse.ok, true);
  const ast = parse.ast as { name: string; args: string[]; block?: unknown[] }[];
  assert.equal(ast[1].args, []);
  assert.ok(JSON.stringify(ast).includes("raw:(redacted)"));
  assert.ok(JSON.stringify(ast).includes('"alice","(redacted)"'));
  const formatted = await read.ok("config_fmt_preview", {});
  assert.match(String(formatted.formatted), /deliver "https:\/\/example\.com\/in\?token=\(redacted\)"/);
  // The proposed text need not compile to be diffed: a URL password in it is redacted too.
  const edited = SPOOLFILE.replace("basic-password-3", "basic-password-3-new").replace('"X-Auth"', '"X-Auth2"').replace("https://example.com", `https://user:${SECRETS[4]}@example.com`);
  const diff = await read.ok("config_diff", { content: edited, context: 0 });
  assert.is(diff.changed, true);
  assert.match(String(diff.unified_diff), /\+\s+header "X-Auth2" "\(redacted\)"/);
  assert.match(String(diff.unified_diff), /\+\s+deliver "https:\/\/user:\(redacted\)@example\.com/);
  const compile = await read.ok("config_compile", {});
  assert.equal((compile.summary as Record<string, unknown>).route_count, 3);
  assert.equal((compile.summary as Record<string, unknown>).managed_route_count, 1);
  const validate = await read.ok("config_validate", { strict_secrets: true });
  outputs.push(JSON.stringify([parse, formatted, diff, compile, validate]));
  // A broken file whose error would quote a secret: diagnostics are the masked form.
  writeFileSync(configPath, SPOOLFILE.replace('auth basic "alice"', "auth basic alice extra"));
  const broken = await read.ok("config_validate", {});
  assert.is(broken.ok, false);
  assert.ok((broken.errors as unknown[]).length > 0);
  outputs.push(JSON.stringify(broken), JSON.stringify(await read.ok("config_compile", {})));
  writeFileSync(configPath, SPOOLFILE);
  for (const text of outputs) assertNoSecret(text, "a config tool");
});

test("config tools read --config only", async () => {
  const reply = await read.call("config_parse", { path: join(temp.path, "Other") });
  assert.ok(reply.isError);
  assert.match(reply.text, /"path"/);
});

test("config_apply: preview, write_only, refused content, actor and reason rules; one audit line each with input_hash", async () => {
  const admin = await McpClient.session([...base, "--role", "admin", "--enable-mutations", "--principal", "alice"]);
  const next = SPOOLFILE.replace("/hooks/c", "/hooks/c2");
  const preview = await admin.ok("config_apply", { content: next, reason: "look first" });
  assert.equal([preview.ok, preview.mode, preview.applied], [true, "preview_only", false]);
  assert.equal(preview.audit, { reason: "look first", actor: "alice", principal: "alice" });
  assert.is(readFileSync(configPath, "utf8"), SPOOLFILE);

  const writeArgs = { content: next, mode: "write_only", reason: "rename c", request_id: "req-1" };
  const written = await admin.ok("config_apply", writeArgs);
  assert.equal([written.ok, written.applied, written.reloaded], [true, true, false]);
  assert.is(readFileSync(configPath, "utf8"), next);

  const invalid = await admin.ok("config_apply", { content: "nonsense {", mode: "write_only", reason: "bad" });
  assert.equal([invalid.ok, invalid.applied], [false, false]);
  assert.is(readFileSync(configPath, "utf8"), next);

  assert.match((await admin.call("config_apply", { content: next })).text, /"reason"/);
  assert.match((await admin.call("config_apply", { content: next, reason: "r", actor: "mallory" })).text, /"actor"/);
  assert.match((await admin.call("config_apply", { content: next, reason: "x".repeat(513) })).text, /"reason"/);
  await admin.close();
  writeFileSync(configPath, SPOOLFILE);

  const lines = admin.auditLines();
  assert.equal(lines.map((l) => l.result), ["ok", "ok", "ok", "error", "error", "error"]);
  assert.equal(lines[1].input_hash, expectedHash(writeArgs));
  assert.equal(lines[1].metadata, { kind: "config_mutation", operation: "config_apply", mode: "write_only", outcome: "written", content_sha256: createHash("sha256").update(next).digest("hex") });
  assert.equal([lines[1].reason, lines[1].actor, lines[1].request_id, lines[1].principal, lines[1].role], ["rename c", "alice", "req-1", "alice", "admin"]);
  assert.is(lines[2].metadata.outcome, "invalid");
  assert.match(String(lines[4].error), /actor/);
  for (const line of lines) assertNoSecret(JSON.stringify(line), "an audit line");
});

test("config_apply write_and_reload without a running instance: rolled back, the previous file restored", async () => {
  const admin = await McpClient.session([...base, "--role", "admin", "--enable-mutations", "--principal", "alice"]);
  const next = SPOOLFILE.replace("/hooks/c", "/hooks/c3");
  const result = await admin.ok("config_apply", { content: next, mode: "write_and_reload", reload_timeout: "1s", reason: "try a reload" });
  assert.equal([result.ok, result.applied, result.reloaded, result.rolled_back], [false, false, false, true]);
  assert.match(JSON.stringify(result.errors), /no running instance/);
  assert.is(readFileSync(configPath, "utf8"), SPOOLFILE);
  await admin.close();
  assert.equal(admin.auditLines().map((l) => [l.result, l.metadata.outcome]), [["ok", "rolled_back"]]);
});

test("rotate_secret: per-operation arguments refused before anything is sent", async () => {
  const admin = await McpClient.session([...base, "--role", "admin", "--enable-mutations", "--principal", "alice"]);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ operation: "list", name: "pool", reason: "r" }, /"reason"/],
    [{ operation: "list", name: "pool", value: "v" }, /"value"/],
    [{ operation: "add", name: "pool", reason: "r" }, /"value"/],
    [{ operation: "add", name: "pool", value: "v" }, /"reason"/],
    [{ operation: "add", name: "pool", value: "v", reason: "r", not_after: "soon" }, /"not_after"/],
    [{ operation: "delete", name: "pool", reason: "r" }, /"id"/],
    [{ operation: "rotate", name: "pool" }, /"operation"/],
  ];
  for (const [args, pattern] of cases) {
    const reply = await admin.call("rotate_secret", args);
    assert.ok(reply.isError, JSON.stringify(args));
    assert.match(reply.text, pattern, reply.text);
  }
  await admin.close();
  const lines = admin.auditLines();
  assert.is(lines.length, cases.length);
  // The value is left out of the hash.
  assert.is(lines[3].input_hash, expectedHash({ operation: "add", name: "pool" }));
  assert.not.ok(admin.stderr().includes('"v"'));
});

test("the SDK's own client (what desktop clients use) connects, lists and calls", async () => {
  const client = new Client({ name: "spool-test", version: "1" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [spoolBin, "mcp", "serve", ...base], stderr: "pipe" });
  await client.connect(transport);
  try {
    assert.is(client.getServerVersion()?.name, "spool");
    const { tools } = await client.listTools();
    assert.equal(tools.map((t) => t.name).sort(), READ_TOOLS);
    const compiled = await client.callTool({ name: "config_compile", arguments: {} });
    assert.is((compiled.structuredContent as { ok: boolean }).ok, true);
    const refused = await client.callTool({ name: "messages_cancel", arguments: { ids: ["x"], reason: "r" } });
    assert.is(refused.isError, true);
  } finally {
    await client.close();
  }
});

test("flags: an unknown flag or role exits 2", async () => {
  for (const flags of [["--rol", "admin"], ["--role", "root"]]) {
    const client = McpClient.start([...base, ...flags]);
    assert.is(await client.close(), 2, flags.join(" "));
  }
});

test.run();
