// IP address parsing, classification and CIDR matching for the egress policy. Pure; the compiler
// refuses a literal target address the policy would deny, and the runtime decides on resolved ones.
// Addresses are canonicalised first: an IPv4-mapped IPv6 address (::ffff:127.0.0.1, ::ffff:7f00:1)
// is its IPv4 address, so a denied IPv4 range cannot be reached by spelling it as IPv6.
import { isIPv4, isIPv6 } from "node:net";

export interface IpAddress {
  readonly family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array;
}

export interface Cidr {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly prefixLength: number;
}

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "cgnat"
  | "link_local"
  | "unique_local"
  | "unspecified"
  | "multicast"
  | "reserved";

/** Parses a textual IPv4 or IPv6 address (brackets and a %zone allowed); IPv4-mapped IPv6 becomes IPv4. */
export function parseIp(text: string): IpAddress | undefined {
  let value = text.trim();
  if (value.startsWith("[") && value.endsWith("]")) value = value.slice(1, -1);
  const zone = value.indexOf("%");
  if (zone >= 0) value = value.slice(0, zone);
  if (isIPv4(value)) return { family: 4, bytes: Uint8Array.from(value.split(".").map(Number)) };
  if (!isIPv6(value)) return undefined;
  const bytes = parseIpv6Bytes(value);
  return isMappedIpv4(bytes) ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes };
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i] << 8) | ip.bytes[i + 1]);
  // RFC 5952: the longest run (≥ 2) of zero groups becomes "::".
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** Parses `10.0.0.0/8`, `fe80::/10`, or a bare address (a /32 or /128). */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  const addressText = slash >= 0 ? text.slice(0, slash) : text;
  const address = parseIp(addressText);
  if (!address) return undefined;
  // A mapped address written in a CIDR keeps its IPv6 prefix length arithmetic: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
  const writtenAsV6 = address.family === 4 && addressText.includes(":");
  const maxLength = writtenAsV6 ? 128 : address.family === 4 ? 32 : 128;
  let prefixLength = maxLength;
  if (slash >= 0) {
    const lengthText = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(lengthText)) return undefined;
    prefixLength = Number(lengthText);
    if (prefixLength > maxLength) return undefined;
  }
  if (writtenAsV6) {
    if (prefixLength < 96) return undefined;
    prefixLength -= 96;
  }
  return { family: address.family, bytes: address.bytes, prefixLength };
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.family !== ip.family) return false;
  let remaining = cidr.prefixLength;
  for (let i = 0; remaining > 0; i++, remaining -= 8) {
    const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
    if ((cidr.bytes[i] & mask) !== (ip.bytes[i] & mask)) return false;
  }
  return true;
}

const v4Ranges: ReadonlyArray<readonly [string, AddressClass]> = [
  ["0.0.0.0/8", "unspecified"], // RFC 1122 "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "cgnat"], // RFC 6598; some clouds serve instance metadata here
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link_local"], // includes the 169.254.169.254 metadata address
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"], // IETF protocol assignments (Oracle metadata lives at 192.0.0.192)
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved"], // benchmarking
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"], // includes 255.255.255.255
];

const v6Ranges: ReadonlyArray<readonly [string, AddressClass]> = [
  // Local-use NAT64 (RFC 8215): where in the address the IPv4 sits depends on the translator's
  // prefix length, which Spool cannot know, so it is not read out; such a target needs a CIDR rule.
  ["64:ff9b:1::/48", "reserved"],
  ["100::/64", "reserved"], // discard-only (RFC 6666)
  ["2001::/32", "reserved"], // Teredo: tunnels to an IPv4 host through a relay
  ["2001:db8::/32", "reserved"], // documentation
  ["fe80::/10", "link_local"],
  ["fec0::/10", "reserved"], // deprecated site-local
  ["fc00::/7", "unique_local"],
  ["ff00::/8", "multicast"],
];

const v4Table = v4Ranges.map(([text, kind]) => [parseCidr(text)!, kind] as const);
const v6Table = v6Ranges.map(([text, kind]) => [parseCidr(text)!, kind] as const);
const nat64 = parseCidr("64:ff9b::/96")!;
/** IPv4-translated addresses (SIIT, RFC 2765 / 6145): ::ffff:0:a.b.c.d. */
const ipv4Translated = parseCidr("::ffff:0:0:0/96")!;
const sixToFour = parseCidr("2002::/16")!;
const ipv4Compatible = parseCidr("::/96")!;

export function classifyIp(ip: IpAddress): AddressClass {
  if (ip.family === 4) {
    for (const [cidr, kind] of v4Table) if (cidrContains(cidr, ip)) return kind;
    return "public";
  }
  const b = ip.bytes;
  if (b.every((x) => x === 0)) return "unspecified";
  if (b.subarray(0, 15).every((x) => x === 0) && b[15] === 1) return "loopback";
  // Forms that embed an IPv4 address reach that address (NAT64 translates, 6to4 tunnels), so they
  // are as private as the address they carry; 64:ff9b::a9fe:a9fe is the metadata address.
  if (cidrContains(nat64, ip) || cidrContains(ipv4Translated, ip)) return classifyIp({ family: 4, bytes: b.slice(12) });
  if (cidrContains(sixToFour, ip)) return classifyIp({ family: 4, bytes: b.slice(2, 6) });
  // Deprecated IPv4-compatible addresses (::127.0.0.1): never legitimate delivery targets.
  if (cidrContains(ipv4Compatible, ip)) return "reserved";
  for (const [cidr, kind] of v6Table) if (cidrContains(cidr, ip)) return kind;
  return "public";
}

/**
 * The IPv4 address a NAT64 `64:ff9b::/96` or SIIT `::ffff:0:0:0/96` address carries (it reaches that
 * address), so CIDR rules judge it as that address (docs/delivery.md "Egress policy"); else undefined.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6) return undefined;
  if (cidrContains(nat64, ip) || cidrContains(ipv4Translated, ip)) return { family: 4, bytes: ip.bytes.slice(12) };
  return undefined;
}

function isMappedIpv4(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** Expands a valid IPv6 text (already checked with isIPv6) to 16 bytes. */
function parseIpv6Bytes(text: string): Uint8Array {
  let groups: number[] = [];
  const toGroups = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        const [a, b, c, d] = piece.split(".").map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const doubleColon = text.indexOf("::");
  if (doubleColon >= 0) {
    const head = toGroups(text.slice(0, doubleColon));
    const tail = toGroups(text.slice(doubleColon + 2));
    groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    groups = toGroups(text);
  }
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}
