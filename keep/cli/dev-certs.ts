// Throwaway certificates for `keep serve --dev`, made with @peculiar/x509 on Node's WebCrypto: an
// ECDSA P-256 CA (its private key is never written) and a server certificate for localhost and
// 127.0.0.1, valid for 30 days.
import { webcrypto } from "node:crypto";

export interface DevCerts {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

export async function makeDevCerts(hosts: { dns: string[]; ips: string[] } = { dns: ["localhost"], ips: ["127.0.0.1"] }): Promise<DevCerts> {
  // tsyringe, which @peculiar/x509 registers its ASN.1 handlers through, needs the Reflect metadata API.
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + 30 * 86400_000);
  const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: webcrypto.getRandomValues(new Uint8Array(8)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "7"),
    name: "CN=Keep dev CA (throwaway)",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: webcrypto.getRandomValues(new Uint8Array(8)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "5"),
    subject: `CN=${hosts.dns[0] ?? hosts.ips[0]}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.SubjectAlternativeNameExtension([...hosts.dns.map((value) => ({ type: "dns" as const, value })), ...hosts.ips.map((value) => ({ type: "ip" as const, value }))]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { caPem: ca.toString("pem"), certPem: cert.toString("pem"), keyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") };
}
