// TLS for the API listeners (`tls { cert_file; key_file; client_ca; client_auth }`): the server's
// certificate and key, and the client-certificate policy, as node:https options plus the checks
// Node does not make itself. The files are read when the listener starts, so an unreadable one is a
// startup error naming it, never a silent fall back to plain HTTP.
import { readFileSync } from "node:fs";
import type { TLSSocket, TlsOptions } from "node:tls";
import type { TlsConfig } from "../../compiler/ir.js";
import { tlsFileKind, tlsFileProblem } from "../../compiler/tls-files.js";

export interface ListenerTls {
  /** node:tls server options: certificate, key and, when client certificates are asked for, the CA. */
  readonly options: TlsOptions;
  /**
   * Whether a completed handshake's client meets the policy; Node enforces only require_and_verify
   * itself (rejectUnauthorized). A refused client's connection is closed before any HTTP is read.
   */
  admits(socket: TLSSocket): boolean;
}

/**
 * One TLS file's bytes, read now and judged as `config validate` judges it (compiler/tls-files.ts):
 * an unreadable or unusable file is an error naming `where`, the directive and the path (OpenSSL's
 * own error names no file). The API listeners and the tracing exporter's collector TLS read theirs here.
 */
export function readTlsFile(where: string, name: string, path: string): Buffer {
  let content: Buffer;
  try {
    content = readFileSync(path);
  } catch (error) {
    throw new Error(`${where} tls ${name} ${path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  const problem = tlsFileProblem(tlsFileKind(name), content);
  if (problem) throw new Error(`${where} tls ${name} ${path} cannot be read: ${problem}`);
  return content;
}

/**
 * The client_auth modes (docs/spoolfile.md "TLS", Caddy's names): `none` asks for no certificate;
 * `request` asks and accepts any answer; `require_any` needs a certificate, verified or not;
 * `verify_if_given` verifies one when it is sent; `require_and_verify` needs one that client_ca
 * vouches for.
 */
export function loadListenerTls(tls: TlsConfig, where: string): ListenerTls {
  const cert = readTlsFile(where, "cert_file", tls.certFile);
  const key = readTlsFile(where, "key_file", tls.keyFile);
  const ca = tls.clientCaFile === null ? undefined : readTlsFile(where, "client_ca", tls.clientCaFile);
  const mode = tls.clientAuth;
  const options: TlsOptions = {
    cert,
    key,
    ...(ca ? { ca } : {}),
    requestCert: mode !== "none",
    rejectUnauthorized: mode === "require_and_verify",
  };
  const hasCertificate = (socket: TLSSocket) => Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
  const admits = (socket: TLSSocket): boolean => {
    switch (mode) {
      case "require_any":
        return hasCertificate(socket);
      case "verify_if_given":
        return !hasCertificate(socket) || socket.authorized;
      default:
        return true;
    }
  };
  return { options, admits };
}
