// 1,000 random requests (methods, paths, tokens, bodies) against a real server: none answers a 5xx
// other than 503 audit_unavailable, every answer is JSON of the documented shapes, and no error
// body ever holds a stored value or the token. The seed is printed so a failure replays.
import { Agent, request } from "node:https";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { seededRandom, type Random } from "../helpers/seeded-random.js";
import { issue, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep serve: fuzz");
const seed = Number(process.env.KEEP_FUZZ_SEED ?? Date.now() % 1_000_000);
let fx: Fixture;
let srv: Served;
let token: string;
const VALUES = ["fuzz-value-alpha-1", "fuzz-value-beta-22", "fuzz\nvalue\ngamma"];

test.before(async () => {
  fx = await makeFixture("fuzz");
  put(fx, "app/A", VALUES[0]);
  put(fx, "app/b/B", VALUES[1]);
  put(fx, "secret/C", VALUES[2]);
  token = issue(fx, "ci-app");
  srv = await serve(fx, ["--enable-export"]);
});
test.after(async () => {
  await srv.stop();
  fx.cleanup();
});

const PIECES = ["app", "A", "b", "B", "secret", "C", "*", "**", ".", "..", "", "%2F", "%00", "ü", "x".repeat(300), "a b", "?q=1", "#f", "\\", "~", "-", "_", ".x"];
const PREFIXES = ["/v1/secrets/", "/v1/list/", "/v1/export", "/v1/", "/healthz", "/", "//v1/secrets/", "/v1/secrets", "/V1/list/"];

function randomPath(r: Random): string {
  const segs = Array.from({ length: r.int(0, 5) }, () => r.pick(PIECES));
  return encodeURI(`${r.pick(PREFIXES)}${segs.join(r.chance(0.9) ? "/" : "//")}`).replace(/%25/g, "%");
}

function randomBody(r: Random): string | Buffer | undefined {
  switch (r.int(0, 6)) {
    case 0:
      return undefined;
    case 1:
      return JSON.stringify({ paths: Array.from({ length: r.int(0, 4) }, () => r.pick(["app/A", "app/b/B", "secret/C", "app/none", "bad//p", "", 7, null])) });
    case 2:
      return Buffer.from(Array.from({ length: r.int(0, 200) }, () => r.int(0, 255)));
    case 3:
      return JSON.stringify(r.pick([null, [], {}, { paths: null }, { paths: ["app/A"], x: 1 }, "str", 1e309]));
    case 4:
      return '{"paths":["app/A"'.slice(0, r.int(0, 17));
    case 5:
      return JSON.stringify({ paths: ["app/A"] });
    default:
      return "x".repeat(r.int(0, 5000));
  }
}

function send(agent: Agent, method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined): Promise<{ status: number; text: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", servername: "localhost", port: srv.port, method, path, ca: fx.certs.caPem, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), type: res.headers["content-type"] }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test(`1,000 random requests never answer a 5xx other than 503 audit_unavailable (seed ${seed})`, async () => {
  const r = seededRandom(seed);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const auths = [undefined, `Bearer ${token}`, "Bearer ", "Bearer x", `bearer ${token}`, `Bearer ${token} extra`, "Basic Zm9vOmJhcg==", `Bearer ${"A".repeat(43)}`];
  for (let batch = 0; batch < 125; batch++) {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const method = r.pick(["GET", "GET", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]);
        const path = randomPath(r);
        const auth = r.pick(auths);
        const body = method === "GET" || method === "HEAD" ? undefined : randomBody(r);
        const headers: Record<string, string> = auth === undefined ? {} : { Authorization: auth };
        if (r.chance(0.3)) headers["Content-Type"] = r.pick(["application/json", "text/plain", "application/octet-stream"]);
        const res = await send(agent, method, path, headers, body).catch((e: Error) => {
          throw new Error(`seed ${seed}: ${method} ${path} ${JSON.stringify(headers)} body ${String(body).slice(0, 60)}: ${e.message}`);
        });
        const label = `seed ${seed}: ${method} ${path} → ${res.status} ${res.text.slice(0, 120)}`;
        assert.ok(res.status < 500 || res.status === 503, label);
        if (method === "HEAD") return;
        assert.is(res.type, "application/json", label);
        const json = JSON.parse(res.text);
        if (res.status >= 400) {
          assert.type(json.error?.code, "string", label);
          if (res.status === 503) assert.is(json.error.code, "audit_unavailable", label);
          for (const v of VALUES) assert.not.ok(res.text.includes(JSON.stringify(v).slice(1, -1)), label);
        }
        assert.not.ok(res.text.includes(token), label);
      }),
    );
  }
  agent.destroy();
  assert.not.ok(srv.stderr().includes(token));
});

test.run();
