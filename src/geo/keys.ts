import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * How Geo nodes authenticate to the primary (GitLab's `GL-Geo` Authorization header): every
 * node is configured with the same FORGELOG_GEO_SECRET (GitLab copies gitlab-secrets.json to
 * every node), and a node's key is the HMAC of its name under it, so the key is never stored
 * and a node cannot pass for another.
 */
export const geoNodeKey = (secret: string, nodeName: string) => createHmac('sha256', secret).update(`forgelog geo node\n${nodeName}`).digest('hex');

/** The header a node sends: `GL-Geo <url-encoded name>:<key>`. */
export const geoAuthorization = (secret: string, nodeName: string) => `GL-Geo ${encodeURIComponent(nodeName)}:${geoNodeKey(secret, nodeName)}`;

/** The node name a `GL-Geo` header proves, or undefined (compared in constant time). */
export function geoNodeNameOf(header: string | undefined, secret: string): string | undefined {
  const match = /^GL-Geo ([^\s:]+):([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  const expected = Buffer.from(geoNodeKey(secret, name), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex')) ? name : undefined;
}
