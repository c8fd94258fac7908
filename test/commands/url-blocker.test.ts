import { describe, expect, it } from 'vitest';
import { addressesBlockedReason, blockedReason, embeddedIpv4, unmapped, type Resolver } from '../../src/security/url-blocker.js';

/** Resolves from a table: no DNS in tests. */
const fake =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = table[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found;
  };

describe('the SSRF guard', () => {
  it('checks every address a name resolves to, after resolution (DNS rebinding to a private address)', async () => {
    const resolve = fake({ 'public.test': ['93.184.216.34'], 'rebound.test': ['93.184.216.34', '10.0.0.5'], 'v6.test': ['::ffff:169.254.1.1'] });
    expect(await blockedReason('https://public.test/x', { allowLocal: false, resolve })).toBeNull();
    expect(await blockedReason('https://rebound.test/x', { allowLocal: false, resolve })).toBe('Requests to the local network are not allowed');
    expect(await blockedReason('https://v6.test/x', { allowLocal: false, resolve })).toBe('Requests to the link local network are not allowed');
    expect(await blockedReason('https://rebound.test/x', { allowLocal: true, resolve })).toBeNull();
  });

  it('lets a name that does not resolve pass, as GitLab 12 does (the sender checks again)', async () => {
    expect(await blockedReason('https://nowhere.test/', { allowLocal: false, resolve: fake({}) })).toBeNull();
  });

  it("answers GitLab's reasons in GitLab's order", async () => {
    expect(await blockedReason('ftp://93.184.216.34/', { allowLocal: false })).toBe('Only allowed schemes are http, https');
    expect(await blockedReason('nope', { allowLocal: false })).toBe('URI is invalid');
    expect(await blockedReason('http://a%0d.test/', { allowLocal: true })).toBe('URI is invalid');
    expect(addressesBlockedReason(['127.0.0.1'])).toBe('Requests to localhost are not allowed');
    expect(addressesBlockedReason(['127.0.0.2'])).toBe('Requests to loopback addresses are not allowed');
    expect(addressesBlockedReason(['172.31.255.255'])).toBe('Requests to the local network are not allowed');
    expect(addressesBlockedReason(['172.32.0.1'])).toBeNull();
    expect(addressesBlockedReason(['fec0::1'])).toBe('Requests to the local network are not allowed');
    expect(addressesBlockedReason(['fc12::1'])).toBe('Requests to the local network are not allowed');
    expect(addressesBlockedReason(['fe80::abcd'])).toBe('Requests to the link local network are not allowed');
    expect(addressesBlockedReason(['2606:2800:220:1::1'])).toBeNull();
    expect(unmapped('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(unmapped('::ffff:10.1.2.3')).toBe('10.1.2.3');
  });

  it('checks the IPv4 address an IPv6 address embeds (compatible, translated, NAT64, 6to4, Teredo), not ISATAP', () => {
    expect(embeddedIpv4('::7f00:1')).toEqual(['127.0.0.1']);
    expect(embeddedIpv4('::ffff:0:a00:1')).toEqual(['10.0.0.1']);
    expect(embeddedIpv4('64:ff9b::c0a8:101')).toEqual(['192.168.1.1']);
    expect(embeddedIpv4('2002:a9fe:1::')).toEqual(['169.254.0.1']);
    expect(embeddedIpv4('2001:0:5db8:d822::a247:27dd')).toEqual(['93.184.216.34', '93.184.216.34']);
    expect(embeddedIpv4('2001:db8::5efe:a00:1')).toEqual([]);
    expect(embeddedIpv4('10.0.0.1')).toEqual([]);
    expect(addressesBlockedReason(['64:ff9b:1:ab::1'])).toBe('Requests to the local network are not allowed');
    expect(addressesBlockedReason(['::a00:1'])).toBe('Requests to the local network are not allowed');
    expect(addressesBlockedReason(['2001:db8::5efe:a00:1'])).toBeNull();
  });
});
