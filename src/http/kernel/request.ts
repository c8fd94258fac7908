import type { Context } from 'hono';
import { preconditionFailed } from '../../domain/errors.js';

/** What @hono/node-server puts in `c.env`: the Node request behind the fetch one. */
interface NodeBindings {
  incoming?: { headers: Record<string, string | string[] | undefined> };
}

/**
 * A request header (name in lower case). On Node the parsed headers are read as they are:
 * hono's `c.req.header` would first build a fetch `Headers` object from the raw ones.
 */
export function header(c: Context, name: string): string | undefined {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** GitLab's destroy_conditionally!: 412 when the resource changed after If-Unmodified-Since. */
export function checkUnmodifiedSince(c: Context, updatedAt: Date) {
  const value = header(c, 'if-unmodified-since');
  if (!value) return;
  const since = new Date(value);
  if (!Number.isNaN(since.getTime()) && Math.floor(updatedAt.getTime() / 1000) > Math.floor(since.getTime() / 1000)) {
    throw preconditionFailed();
  }
}
