import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * The SSRF guard (GitLab's Gitlab::UrlBlocker, 12.x, with PublicUrlValidator's options): an
 * http(s) URL whose host resolves to this machine, a loopback, private (RFC 1918, IPv6
 * site-local or unique-local) or link-local address is refused unless local requests are
 * allowed (`allow_local_requests_from_web_hooks_and_services`). Every address the host
 * resolves to is checked, after resolution, IPv4-mapped IPv6 addresses as their IPv4.
 *
 * Beyond GitLab 12 (which unwraps only IPv4-mapped `::ffff:a.b.c.d`), an IPv6 address that
 * embeds an IPv4 address is checked for that IPv4 address too, as a packet sent to it can
 * reach it through a translator or tunnel: IPv4-compatible `::a.b.c.d` (RFC 4291),
 * IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), NAT64's well-known prefix `64:ff9b::/96`
 * (RFC 6052), 6to4 `2002:AABB:CCDD::/48` (RFC 3056) and Teredo `2001:0::/32` (RFC 4380: the
 * server's address and the client's, de-obfuscated). NAT64's local-use prefix
 * `64:ff9b:1::/48` (RFC 8215) is the local network whatever it embeds: where the IPv4
 * address sits in it is the operator's choice (prefix lengths /48 to /96). Left alone:
 * ISATAP interface ids (`::5efe:a.b.c.d`) and other IPv4-embedding schemes under ordinary
 * global prefixes, which a host reaches only as the prefix's network routes them.
 *
 * Saving an integration runs it; whoever sends to the URL runs it again at send time
 * (a host may resolve elsewhere by then: DNS rebinding).
 */

/** The addresses a host name resolves to (injectable: tests resolve without DNS). */
export type Resolver = (host: string) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface GuardOptions {
  /** `allow_local_requests_from_web_hooks_and_services`. */
  readonly allowLocal: boolean;
  readonly resolve?: Resolver;
}

/**
 * Why `url` is blocked, in GitLab's words ("Requests to localhost are not allowed"), or
 * null when it may be requested. A host that does not resolve passes, as in GitLab 12
 * (`rescue SocketError; return true`): the send-time check refuses it then.
 */
export async function blockedReason(url: string, options: GuardOptions): Promise<string | null> {
  if (/[\n\r]/.test(safeDecode(url))) return 'URI is invalid';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'URI is invalid';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Only allowed schemes are http, https';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === '' || (isIP(host) === 0 && !/^\p{L}|^\p{N}/u.test(host))) return 'Hostname or IP address invalid';
  if (options.allowLocal) return null;
  let addresses: readonly string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : await (options.resolve ?? systemResolver)(host);
  } catch {
    return null;
  }
  return addressesBlockedReason(addresses.map(unmapped));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The order of UrlBlocker.validate!'s checks: localhost, loopback, local network, link local. */
export function addressesBlockedReason(resolved: readonly string[]): string | null {
  const addresses = resolved.flatMap((a) => [a, ...embeddedIpv4(a)]);
  const own = ownAddresses();
  if (addresses.some((a) => own.has(canonical(a)))) return 'Requests to localhost are not allowed';
  if (addresses.some(isLoopback)) return 'Requests to loopback addresses are not allowed';
  if (addresses.some(isLocalNetwork)) return 'Requests to the local network are not allowed';
  if (addresses.some(isLinkLocal)) return 'Requests to the link local network are not allowed';
  return null;
}

// ───────────────────────────── Addresses ─────────────────────────────

/** "::", "0.0.0.0" and the machine's own addresses (Socket.ip_address_list), loopbacks included. */
function ownAddresses(): Set<string> {
  const own = new Set(['0.0.0.0', '::', '127.0.0.1', '::1'].map(canonical));
  for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) own.add(canonical(info.address.replace(/%.*$/, '')));
  return own;
}

const ipv4Octets = (a: string) => a.split('.').map(Number);

/** An IPv6 address as eight 16-bit groups (an embedded dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = ipv4Octets(v4[1]!);
    text = text.slice(0, v4.index) + `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) as its IPv4 address, as UrlBlocker does. */
export function unmapped(address: string): string {
  if (isIP(address) !== 6) return address;
  const g = ipv6Groups(address);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
  return address;
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/** The IPv4 addresses an IPv6 address embeds (see the header), none for any other address. */
export function embeddedIpv4(address: string): string[] {
  if (isIP(address) !== 6) return [];
  const g = ipv6Groups(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // IPv4-compatible ::/96, IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96.
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return [ipv4Of(g[6]!, g[7]!)];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [ipv4Of(g[6]!, g[7]!)];
  // NAT64 well-known prefix 64:ff9b::/96.
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [ipv4Of(g[6]!, g[7]!)];
  // 6to4 2002::/16: the IPv4 address follows the prefix.
  if (g[0] === 0x2002) return [ipv4Of(g[1]!, g[2]!)];
  // Teredo 2001:0::/32: the server, then the client's address with every bit flipped.
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2]!, g[3]!), ipv4Of(~g[6]! & 0xffff, ~g[7]! & 0xffff)];
  return [];
}

const canonical = (address: string) => (isIP(address) === 6 ? ipv6Groups(address).join(':') : address);

function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return ipv4Octets(address)[0] === 127;
  const g = ipv6Groups(address);
  return g.slice(0, 7).every((x) => x === 0) && g[7] === 1;
}

function isLocalNetwork(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = ipv4Octets(address);
    return a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168);
  }
  const [first, second, third] = ipv6Groups(address) as [number, number, number];
  // Site-local fec0::/10, unique-local fc00::/7, NAT64's local-use prefix 64:ff9b:1::/48.
  return (first & 0xffc0) === 0xfec0 || (first & 0xfe00) === 0xfc00 || (first === 0x64 && second === 0xff9b && third === 1);
}

function isLinkLocal(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = ipv4Octets(address);
    return a === 169 && b === 254;
  }
  return (ipv6Groups(address)[0]! & 0xffc0) === 0xfe80;
}
