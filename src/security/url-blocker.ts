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
export function addressesBlockedReason(addresses: readonly string[]): string | null {
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
  const first = ipv6Groups(address)[0]!;
  // Site-local fec0::/10, unique-local fc00::/7.
  return (first & 0xffc0) === 0xfec0 || (first & 0xfe00) === 0xfc00;
}

function isLinkLocal(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = ipv4Octets(address);
    return a === 169 && b === 254;
  }
  return (ipv6Groups(address)[0]! & 0xffc0) === 0xfe80;
}
