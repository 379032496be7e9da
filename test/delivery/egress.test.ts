import { suite } from "uvu";
import * as assert from "uvu/assert";
import { request } from "undici";
import {
  checkEgressAddresses,
  checkEgressUrl,
  compileEgressPolicy,
  createEgressAgent,
  isEgressDenied,
  parseEgressRule,
  type EgressPolicy,
  type ResolveHost,
} from "../../runtime/delivery/egress.js";
import { cidrContains, classifyIp, formatIp, parseCidr, parseIp } from "../../compiler/ip.js";
import { deliverHttp } from "../../runtime/delivery/push.js";
import { startReceiver } from "./helpers.js";
import { DEFAULTS } from "../../compiler/defaults.js";

const defaultEgressPolicy = DEFAULTS.egress;

const ip = suite("ip classification");

ip("IPv4-mapped IPv6 is the IPv4 address, in both spellings", () => {
  assert.equal(parseIp("::ffff:127.0.0.1"), parseIp("127.0.0.1"));
  assert.equal(parseIp("::ffff:7f00:1"), parseIp("127.0.0.1"));
  assert.equal(parseIp("[::FFFF:A9FE:A9FE]"), parseIp("169.254.169.254"));
});

ip("ranges are classified as the policy needs", () => {
  const cases: Array<[string, string]> = [
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "cgnat"],
    ["169.254.169.254", "link_local"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456::1", "unique_local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:10.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "link_local"],
    ["2002:7f00:1::", "loopback"],
    ["::127.0.0.1", "reserved"],
    ["::ffff:0:10.0.0.1", "private"],
    ["::ffff:0:a9fe:a9fe", "link_local"],
    ["::ffff:0:8.8.8.8", "public"],
    ["64:ff9b:1:a9fe:a9:fe00::", "reserved"],
    ["64:ff9b:1::a9fe:a9fe", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
    ["2001:db8::1", "reserved"],
    ["100::1", "reserved"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["8.8.8.8", "public"],
    ["172.32.0.1", "public"],
    ["100.128.0.1", "public"],
    ["2606:4700::1111", "public"],
  ];
  for (const [text, expected] of cases) assert.is(classifyIp(parseIp(text)!), expected, text);
});

ip("addresses print in their short form", () => {
  assert.is(formatIp(parseIp("0:0:0:0:0:0:0:1")!), "::1");
  assert.is(formatIp(parseIp("::")!), "::");
  assert.is(formatIp(parseIp("fe80:0:0:0:1:0:0:2")!), "fe80::1:0:0:2");
  assert.is(formatIp(parseIp("2001:db8:0:1:1:1:1:1")!), "2001:db8:0:1:1:1:1:1");
  assert.is(formatIp(parseIp("::ffff:169.254.169.254")!), "169.254.169.254");
});

ip("non-addresses do not parse", () => {
  for (const text of ["", "localhost", "1.2.3", "1.2.3.256", "::ffff::1", "01.2.3.4x"]) assert.is(parseIp(text), undefined, text);
});

ip("CIDRs match by prefix, a bare address is a single host", () => {
  assert.ok(cidrContains(parseCidr("10.0.0.0/8")!, parseIp("10.200.1.1")!));
  assert.not.ok(cidrContains(parseCidr("10.0.0.0/8")!, parseIp("11.0.0.1")!));
  assert.ok(cidrContains(parseCidr("172.16.0.0/12")!, parseIp("172.31.0.1")!));
  assert.not.ok(cidrContains(parseCidr("172.16.0.0/12")!, parseIp("172.32.0.1")!));
  assert.ok(cidrContains(parseCidr("2001:db8::/32")!, parseIp("2001:db8:ffff::1")!));
  assert.not.ok(cidrContains(parseCidr("2001:db8::/32")!, parseIp("2001:db9::1")!));
  assert.ok(cidrContains(parseCidr("203.0.113.7")!, parseIp("203.0.113.7")!));
  assert.not.ok(cidrContains(parseCidr("203.0.113.7")!, parseIp("203.0.113.8")!));
  assert.ok(cidrContains(parseCidr("0.0.0.0/0")!, parseIp("8.8.8.8")!));
  assert.not.ok(cidrContains(parseCidr("10.0.0.0/8")!, parseIp("fc00::1")!), "families never match");
  assert.ok(cidrContains(parseCidr("::ffff:10.0.0.0/104")!, parseIp("10.9.9.9")!));
  assert.is(parseCidr("10.0.0.0/33"), undefined);
});

ip.run();

const decide = suite("egress decisions");
const policyOf = (overrides: Partial<EgressPolicy>) => compileEgressPolicy({ ...defaultEgressPolicy, ...overrides });
const addrs = (...texts: string[]) => texts.map((t) => parseIp(t)!);

decide("defaults are https_only on, redirects off, rebind protection on", () => {
  assert.equal(defaultEgressPolicy, { allow: [], deny: [], httpsOnly: true, redirects: false, dnsRebindProtection: true });
});

decide("rebind protection refuses every non-public address", () => {
  const policy = policyOf({});
  for (const address of ["127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "169.254.169.254", "fe80::1", "fc00::1", "0.0.0.0", "::", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
    assert.not.ok(checkEgressAddresses(policy, "hooks.example.com", addrs(address)).allowed, address);
  }
  assert.ok(checkEgressAddresses(policy, "hooks.example.com", addrs("93.184.216.34", "2606:2800:220:1::1")).allowed);
});

decide("one private address among public ones is enough to refuse", () => {
  assert.not.ok(checkEgressAddresses(policyOf({}), "mixed.example", addrs("93.184.216.34", "10.0.0.5")).allowed);
});

decide("an allow host rule admits the host however it resolves", () => {
  const policy = policyOf({ allow: ["internal.example"] });
  assert.ok(checkEgressAddresses(policy, "internal.example", addrs("10.0.0.5", "127.0.0.1")).allowed);
  assert.ok(checkEgressAddresses(policy, "INTERNAL.example.", addrs("10.0.0.5")).allowed);
  assert.not.ok(checkEgressAddresses(policy, "other.example", addrs("93.184.216.34")).allowed, "a non-empty allow list admits only what it names");
});

decide("allow \"*\" admits every host name but names none: rebind protection still refuses private addresses", () => {
  const policy = policyOf({ allow: ["*"] });
  assert.ok(checkEgressAddresses(policy, "hooks.example.com", addrs("93.184.216.34")).allowed);
  for (const [host, address] of [["localhost", "127.0.0.1"], ["metadata.example", "169.254.169.254"], ["127.0.0.1", "127.0.0.1"]]) {
    assert.not.ok(checkEgressAddresses(policy, host, addrs(address)).allowed, `${host} → ${address}`);
  }
  assert.ok(checkEgressAddresses(policyOf({ allow: ["*"], dnsRebindProtection: false }), "localhost", addrs("127.0.0.1")).allowed, "unless protection is off");
  assert.ok(checkEgressAddresses(policyOf({ allow: ["*", "10.0.0.0/8"] }), "svc.local", addrs("10.0.0.5")).allowed, "or a CIDR rule covers the address");
});

decide("a wildcard names subdomains, not the domain itself", () => {
  const policy = policyOf({ allow: ["*.internal.example"] });
  assert.ok(checkEgressAddresses(policy, "a.b.internal.example", addrs("10.0.0.5")).allowed);
  assert.not.ok(checkEgressAddresses(policy, "internal.example", addrs("10.0.0.5")).allowed);
  assert.not.ok(checkEgressAddresses(policy, "evilinternal.example", addrs("10.0.0.5")).allowed);
});

decide("an allow CIDR admits a target only if every address is inside it", () => {
  const policy = policyOf({ allow: ["10.0.0.0/8"] });
  assert.ok(checkEgressAddresses(policy, "svc.local", addrs("10.1.1.5", "10.2.2.2")).allowed);
  assert.not.ok(checkEgressAddresses(policy, "svc.local", addrs("10.1.1.5", "169.254.169.254")).allowed);
  assert.not.ok(checkEgressAddresses(policy, "svc.local", addrs("10.1.1.5", "93.184.216.34")).allowed);
});

decide("deny wins over allow, for names and for addresses", () => {
  assert.not.ok(checkEgressAddresses(policyOf({ allow: ["svc.example"], deny: ["svc.example"] }), "svc.example", addrs("93.184.216.34")).allowed);
  assert.not.ok(checkEgressAddresses(policyOf({ allow: ["svc.example"], deny: ["169.254.0.0/16"] }), "svc.example", addrs("169.254.169.254")).allowed);
  assert.not.ok(checkEgressAddresses(policyOf({ deny: ["*.blocked.example"] }), "x.blocked.example", addrs("93.184.216.34")).allowed);
  assert.not.ok(checkEgressAddresses(policyOf({ deny: ["93.184.216.0/24"] }), "fine.example", addrs("93.184.216.34")).allowed);
});

decide("without rebind protection private addresses pass unless denied", () => {
  const policy = policyOf({ dnsRebindProtection: false });
  assert.ok(checkEgressAddresses(policy, "svc.local", addrs("10.0.0.1")).allowed);
  assert.not.ok(checkEgressAddresses(policyOf({ dnsRebindProtection: false, deny: ["10.0.0.0/8"] }), "svc.local", addrs("::ffff:10.0.0.1")).allowed);
});

decide("deny and allow CIDR rules judge a NAT64 or SIIT address by the IPv4 address it carries", () => {
  const deny = policyOf({ dnsRebindProtection: false, deny: ["1.1.1.0/24"] });
  for (const address of ["64:ff9b::1.1.1.1", "64:ff9b::101:101", "::ffff:0:1.1.1.1", "::ffff:1.1.1.1"]) {
    assert.not.ok(checkEgressAddresses(deny, "svc.example", addrs(address)).allowed, address);
  }
  assert.not.ok(checkEgressUrl(deny, "https://[64:ff9b::1.1.1.1]/a").allowed);
  assert.ok(checkEgressAddresses(deny, "svc.example", addrs("64:ff9b::8.8.8.8")).allowed);
  assert.ok(checkEgressAddresses(policyOf({ allow: ["1.1.1.0/24"] }), "svc.example", addrs("64:ff9b::1.1.1.1")).allowed);
  assert.not.ok(checkEgressAddresses(policyOf({ allow: ["1.1.1.0/24"] }), "svc.example", addrs("64:ff9b::8.8.8.8")).allowed);
});

decide("https_only refuses plain http and other schemes always", () => {
  assert.not.ok(checkEgressUrl(policyOf({}), "http://hooks.example.com/").allowed);
  assert.ok(checkEgressUrl(policyOf({}), "https://hooks.example.com/").allowed);
  assert.not.ok(checkEgressUrl(policyOf({ httpsOnly: false }), "ftp://hooks.example.com/").allowed);
  assert.not.ok(checkEgressUrl(policyOf({ httpsOnly: false }), "not a url").allowed);
});

decide("an IP-literal URL is judged by its address up front", () => {
  const policy = policyOf({ httpsOnly: false });
  for (const url of ["http://127.0.0.1/", "http://[::1]/", "http://[::ffff:7f00:1]/", "http://169.254.169.254/latest/meta-data", "http://2130706433/", "http://0x7f.1/"]) {
    assert.not.ok(checkEgressUrl(policy, url).allowed, url);
  }
  assert.ok(checkEgressUrl(policy, "http://93.184.216.34/").allowed);
});

decide("malformed rules are refused", () => {
  assert.throws(() => parseEgressRule("bad host!"));
  assert.throws(() => parseEgressRule("10.0.0.0/40"));
  assert.equal(parseEgressRule("*.Example.com"), { kind: "host", host: "example.com", subdomains: true, text: "*.Example.com" });
});

decide.run();

const connect = suite("egress at connect time");
const toLoopback: ResolveHost = async () => [{ address: "127.0.0.1", family: 4 }];
const plainHttp = { httpsOnly: false } as const;

async function post(policy: EgressPolicy, url: string, resolveHost: ResolveHost = toLoopback): Promise<number | "denied"> {
  const agent = createEgressAgent(policy, { resolveHost });
  try {
    const response = await request(url, { method: "POST", body: "x", dispatcher: agent });
    await response.body.dump();
    return response.statusCode;
  } catch (error) {
    if (isEgressDenied(error)) return "denied";
    throw error;
  } finally {
    await agent.close();
  }
}

connect("loopback, its IPv6 and IPv4-mapped forms are refused before any byte is sent", async () => {
  const receiver = await startReceiver();
  try {
    const policy = { ...defaultEgressPolicy, ...plainHttp };
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::1]"]) {
      assert.is(await post(policy, `http://${host}:${receiver.port}/hook`), "denied", host);
    }
    assert.is(receiver.requests.length, 0);
  } finally {
    await receiver.close();
  }
});

connect("private, link-local metadata and unique-local targets are refused", async () => {
  const policy = { ...defaultEgressPolicy, ...plainHttp };
  for (const host of ["10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "169.254.169.254", "[fe80::1]", "[fc00::1]", "0.0.0.0"]) {
    assert.is(await post(policy, `http://${host}:9/`), "denied", host);
  }
});

connect("a host name that resolves to a denied address is refused at connect", async () => {
  const receiver = await startReceiver();
  try {
    const policy = compileEgressPolicy({ ...defaultEgressPolicy, ...plainHttp });
    // The URL check alone cannot know where the name points: it passes, and the connect refuses.
    assert.ok(checkEgressUrl(policy, `http://rebind.test:${receiver.port}/`).allowed);
    assert.is(await post(policy, `http://rebind.test:${receiver.port}/`), "denied");
    const mixed: ResolveHost = async () => [{ address: "93.184.216.34", family: 4 }, { address: "127.0.0.1", family: 4 }];
    assert.is(await post(policy, `http://mixed.test:${receiver.port}/`, mixed), "denied");
    assert.is(receiver.requests.length, 0);
  } finally {
    await receiver.close();
  }
});

connect("a name that rebinds between two lookups is judged by the address connected to", async () => {
  const receiver = await startReceiver();
  try {
    let lookups = 0;
    // First lookup answers a public address (what a pre-flight check would have seen), the connect's lookup answers loopback.
    const rebinding: ResolveHost = async () => (lookups++ === 0 ? [{ address: "93.184.216.34", family: 4 }] : [{ address: "127.0.0.1", family: 4 }]);
    await rebinding("rebind.test");
    assert.is(await post({ ...defaultEgressPolicy, ...plainHttp }, `http://rebind.test:${receiver.port}/`, rebinding), "denied");
    assert.is(lookups, 2);
    assert.is(receiver.requests.length, 0);
  } finally {
    await receiver.close();
  }
});

connect("explicit allow rules let loopback through", async () => {
  const receiver = await startReceiver();
  try {
    const base = { ...defaultEgressPolicy, ...plainHttp };
    assert.is(await post({ ...base, allow: ["127.0.0.1"] }, `http://127.0.0.1:${receiver.port}/`), 200);
    assert.is(await post({ ...base, allow: ["rebind.test"] }, `http://rebind.test:${receiver.port}/`), 200);
    assert.is(await post({ ...base, allow: ["127.0.0.0/8"] }, `http://rebind.test:${receiver.port}/`), 200);
    assert.is(await post({ ...base, dnsRebindProtection: false }, `http://127.0.0.1:${receiver.port}/`), 200);
    assert.is(await post({ ...base, allow: ["rebind.test"], deny: ["127.0.0.0/8"] }, `http://rebind.test:${receiver.port}/`), "denied");
    assert.is(receiver.requests.length, 4);
  } finally {
    await receiver.close();
  }
});

connect("https_only is enforced by the agent too", async () => {
  assert.is(await post({ ...defaultEgressPolicy, allow: ["127.0.0.1"] }, "http://127.0.0.1:9/"), "denied");
});

connect.run();

const redirects = suite("redirects under the egress policy");

redirects("a redirect is not followed by default and is dead (no_retry)", async () => {
  const receiver = await startReceiver((req, res) => {
    if (req.path === "/old") res.writeHead(307, { location: "/new" }).end();
    else res.end("ok");
  });
  const policy = { ...defaultEgressPolicy, httpsOnly: false, allow: ["127.0.0.1"] };
  const agent = createEgressAgent(policy);
  try {
    const result = await deliverHttp({ url: `${receiver.url}/old`, body: Buffer.from("{}"), headers: {}, messageId: "m1", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: policy });
    assert.equal(result, { outcome: "dead", deadReason: "no_retry", statusCode: 307, error: "status 307" });
    assert.equal(receiver.requests.map((r) => r.path), ["/old"]);
  } finally {
    await agent.close();
    await receiver.close();
  }
});

redirects("an allowed redirect is followed with the same body", async () => {
  const receiver = await startReceiver((req, res) => {
    if (req.path === "/old") res.writeHead(308, { location: "/new" }).end();
    else res.end("ok");
  });
  const policy = { ...defaultEgressPolicy, httpsOnly: false, redirects: true, allow: ["127.0.0.1"] };
  const agent = createEgressAgent(policy);
  try {
    const result = await deliverHttp({ url: `${receiver.url}/old`, body: Buffer.from('{"a":1}'), headers: {}, messageId: "m1", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: policy });
    assert.equal(result, { outcome: "acked", statusCode: 200, redirects: 1 });
    assert.equal(receiver.requests.map((r) => [r.method, r.path, r.body.toString()]), [["POST", "/old", '{"a":1}'], ["POST", "/new", '{"a":1}']]);
  } finally {
    await agent.close();
    await receiver.close();
  }
});

redirects("a redirect to a denied address is refused as policy_denied", async () => {
  const receiver = await startReceiver((req, res) => {
    if (req.path === "/start") res.writeHead(302, { location: `http://127.0.0.1:${receiver.port}/internal` }).end();
    else res.end("secret");
  });
  // allowed.test is allowed by name (however it resolves); 127.0.0.1 itself is not.
  const policy = { ...defaultEgressPolicy, httpsOnly: false, redirects: true, allow: ["allowed.test"] };
  const agent = createEgressAgent(policy, { resolveHost: toLoopback });
  try {
    const result = await deliverHttp({ url: `http://allowed.test:${receiver.port}/start`, body: Buffer.from("{}"), headers: {}, messageId: "m1", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: policy });
    assert.is(result.outcome, "dead");
    assert.is(result.outcome === "dead" && result.deadReason, "policy_denied");
    assert.equal(receiver.requests.map((r) => r.path), ["/start"]);
  } finally {
    await agent.close();
    await receiver.close();
  }
});

redirects("a redirect to a NAT64 address a deny rule covers through its IPv4 address is refused", async () => {
  const receiver = await startReceiver((req, res) => {
    if (req.path === "/start") res.writeHead(302, { location: "http://[64:ff9b::1.1.1.1]/internal" }).end();
    else res.end("secret");
  });
  const policy = { ...defaultEgressPolicy, httpsOnly: false, redirects: true, dnsRebindProtection: false, deny: ["1.1.1.0/24"] };
  const agent = createEgressAgent(policy);
  try {
    const result = await deliverHttp({ url: `${receiver.url}/start`, body: Buffer.from("{}"), headers: {}, messageId: "m1", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: policy });
    assert.is(result.outcome === "dead" && result.deadReason, "policy_denied");
    assert.match(result.outcome === "dead" ? result.error ?? "" : "", "64:ff9b::101:101");
  } finally {
    await agent.close();
    await receiver.close();
  }
});

redirects("a redirect to a name resolving to the metadata address is refused at connect", async () => {
  const receiver = await startReceiver((req, res) => {
    if (req.path === "/start") res.writeHead(307, { location: `http://sneaky.test:${receiver.port}/internal` }).end();
    else res.end("secret");
  });
  const policy = { ...defaultEgressPolicy, httpsOnly: false, redirects: true, allow: ["127.0.0.1"] };
  const toMetadata: ResolveHost = async () => [{ address: "169.254.169.254", family: 4 }];
  const agent = createEgressAgent(policy, { resolveHost: toMetadata });
  try {
    const result = await deliverHttp({ url: `${receiver.url}/start`, body: Buffer.from("{}"), headers: {}, messageId: "m1", attempt: 1, timeoutMs: 5_000, dispatcher: agent, egress: policy });
    assert.is(result.outcome === "dead" && result.deadReason, "policy_denied");
    assert.equal(receiver.requests.map((r) => r.path), ["/start"]);
  } finally {
    await agent.close();
    await receiver.close();
  }
});

redirects.run();
