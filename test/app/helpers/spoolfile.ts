// Spoolfiles for end-to-end tests: free ports chosen beforehand and written into the text.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./spool-process.js";

export interface Ports {
  ingress: number;
  pull: number;
  admin: number;
  metrics: number;
}

export async function freePorts(): Promise<Ports> {
  return { ingress: await freePort(), pull: await freePort(), admin: await freePort(), metrics: await freePort() };
}

export function urls(ports: Ports) {
  return {
    ingress: `http://127.0.0.1:${ports.ingress}`,
    pull: `http://127.0.0.1:${ports.pull}`,
    admin: `http://127.0.0.1:${ports.admin}`,
    metrics: `http://127.0.0.1:${ports.metrics}/metrics`,
  };
}

/** The listener blocks for `ports`, then `body` (routes and other blocks). */
export function spoolfileText(ports: Ports, body: string, options: { pullExtra?: string; observability?: string } = {}): string {
  return [
    `ingress { listen 127.0.0.1:${ports.ingress} }`,
    `pull_api { listen 127.0.0.1:${ports.pull}; auth token raw:pull-token; max_wait 30s${options.pullExtra ?? ""} }`,
    `admin_api { listen 127.0.0.1:${ports.admin}; auth token raw:admin-token }`,
    `observability {`,
    `  access_log on`,
    `  runtime_log info`,
    `  metrics { listen 127.0.0.1:${ports.metrics} }`,
    options.observability ?? "",
    `}`,
    body,
    "",
  ].join("\n");
}

export function writeSpoolfile(dir: string, text: string, name = "Spoolfile"): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
