// `keep serve --dev`: everything needed to try Keep in one command, under ./.data/keep/ — a
// throwaway CA and server certificate for localhost/127.0.0.1, a demo policy, the identity
// "demo" with its token file, and two demo secrets. An existing .data/keep/ is reused as it is.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServeOptions } from "../server/serve.js";
import { SecretStore } from "../server/store.js";
import { tokenIssue } from "./admin.js";
import { makeDevCerts } from "./dev-certs.js";

export const DEV_DIR = join(".data", "keep");
export const DEV_LISTEN = "127.0.0.1:8443";

const DEMO_POLICY = `# Demo policy written by \`keep serve --dev\`.
[[identity]]
name = "demo"
kind = "machine"
policies = ["demo-read"]

[[policy]]
name = "demo-read"

  [[policy.rule]]
  path = "demo/**"
  capabilities = ["read", "list"]
`;

export const DEMO_SECRETS: Record<string, string> = {
  "demo/app/DB_PASSWORD": "correct-horse-battery-staple",
  "demo/app/API_KEY": "dev-api-key-not-a-real-secret",
};

export async function prepareDev(listen: string | undefined): Promise<ServeOptions> {
  const dir = DEV_DIR;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (name: string): string => join(dir, name);
  if (!existsSync(f("server.pem")) || !existsSync(f("server-key.pem")) || !existsSync(f("ca.pem"))) {
    const certs = await makeDevCerts();
    writeFileSync(f("ca.pem"), certs.caPem, { mode: 0o644 });
    writeFileSync(f("server-key.pem"), certs.keyPem, { mode: 0o600 });
    writeFileSync(f("server.pem"), certs.certPem, { mode: 0o644 });
  }
  if (!existsSync(f("policy.toml"))) writeFileSync(f("policy.toml"), DEMO_POLICY, { mode: 0o644 });
  const data = f("data");
  if (!existsSync(data)) {
    const store = new SecretStore(data);
    for (const [path, value] of Object.entries(DEMO_SECRETS)) store.put(path, Buffer.from(value, "utf8"));
    store.close();
  }
  if (!existsSync(f("demo.token"))) tokenIssue("demo", f("policy.toml"), data, f("demo.token"));
  return { listen: listen ?? DEV_LISTEN, tlsCert: f("server.pem"), tlsKey: f("server-key.pem"), policy: f("policy.toml"), data, enableExport: true };
}

export function devBanner(url: string): string {
  const port = new URL(url).port;
  return [
    "keep: DEV MODE: a throwaway CA, certificate and token in .data/keep/ (never use this in production)",
    "keep: try",
    `curl --cacert ${DEV_DIR}/ca.pem -H "Authorization: Bearer $(cat ${DEV_DIR}/demo.token)" https://localhost:${port}/v1/secrets/demo/app/DB_PASSWORD`,
    "",
  ].join("\n");
}
