// TLS material made fresh for each test run (no certificate is committed): a CA, a server
// certificate it signs for localhost and 127.0.0.1, a client certificate it signs, and a
// self-signed "stranger" no CA vouches for. Made with the openssl binary, P-256 keys.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "./temp-dir.js";

export interface TlsMaterial {
  readonly dir: string;
  /** Absolute path of `ca.pem`, `server.pem`, `server.key`, `client.pem`, `client.key`, `stranger.pem`, `stranger.key`. */
  file(name: "ca.pem" | "server.pem" | "server.key" | "client.pem" | "client.key" | "stranger.pem" | "stranger.key"): string;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

function key(dir: string, name: string): void {
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name]);
}

function signed(dir: string, name: string, subject: string, extensions: string): void {
  key(dir, `${name}.key`);
  openssl(dir, ["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.pem`]);
}

export function makeTlsMaterial(): TlsMaterial {
  const temp = makeTempDir("tls");
  const dir = temp.path;
  key(dir, "ca.key");
  openssl(dir, ["req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=Spool test CA", "-days", "2", "-sha256", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", "ca.pem"]);
  signed(dir, "server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  signed(dir, "client", "/CN=spool test client", "extendedKeyUsage=clientAuth\n");
  key(dir, "stranger.key");
  openssl(dir, ["req", "-x509", "-new", "-key", "stranger.key", "-subj", "/CN=localhost", "-days", "2", "-sha256", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-out", "stranger.pem"]);
  return { dir, file: (name) => join(dir, name), cleanup: temp.cleanup };
}
