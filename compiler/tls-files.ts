// Whether a TLS file holds what its directive says (docs/spoolfile.md "TLS"): a PEM certificate for
// cert_file, client_ca and ca_file, a PEM private key for key_file. The compiler reports a file that
// does not (as it does an unreadable one), and the runtime names the directive and file when it
// loads one, so `config validate` and `spool run` give one verdict. Never shows the file's content.
import { X509Certificate, createPrivateKey } from "node:crypto";

export type TlsFileKind = "certificate" | "private_key";

/** The kind of file a TLS directive names. */
export function tlsFileKind(directive: string): TlsFileKind {
  return directive === "key_file" ? "private_key" : "certificate";
}

/** Why `content` is not a usable file of `kind`, in a few words; undefined when it is. */
export function tlsFileProblem(kind: TlsFileKind, content: string | Buffer): string | undefined {
  const text = typeof content === "string" ? content : content.toString("utf8");
  try {
    if (kind === "certificate") {
      if (!text.includes("-----BEGIN CERTIFICATE-----")) return "it holds no PEM certificate (-----BEGIN CERTIFICATE-----)";
      new X509Certificate(text);
    } else {
      if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) return "it holds no PEM private key (-----BEGIN PRIVATE KEY-----)";
      createPrivateKey(text);
    }
    return undefined;
  } catch {
    // OpenSSL's own message may quote what it could not parse: only the kind is said.
    return kind === "certificate" ? "it is not a valid PEM certificate" : "it is not a valid PEM private key (or it is encrypted)";
  }
}
