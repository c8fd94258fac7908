import type { Context, MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import { MalformedString, rawParams } from './params.js';
import { header } from './request.js';

/**
 * What the kernel checks on every request before routing and authentication: the body's
 * size, values PostgreSQL cannot store, the request id; and the headers GitLab puts on
 * every answer (caching, sniffing, framing, CORS for /api/*).
 */

// ───────────────────────────── Request id ─────────────────────────────

/** Rails' ActionDispatch::RequestId: a client's id is kept only when it is short and plain. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9_@-]{1,255}$/;

export const requestIdOf = (c: Context): string => {
  const given = header(c, 'x-request-id');
  return given !== undefined && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
};

// ───────────────────────────── Response headers ─────────────────────────────

/** GitLab's Rack::Cors for `/api/*` (config/application.rb): any origin, method and header, no credentials. */
const CORS_EXPOSE = 'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page';
const CORS_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const CORS_MAX_AGE = '7200';

/**
 * Rails' default headers and Rack::ETag's Cache-Control on every answer, CORS on `/api/*`;
 * a CORS preflight is answered here, before anything else looks at the request.
 */
export const responseHeaders =
  (apiPrefix: string): MiddlewareHandler =>
  async (c, next) => {
    c.header('Cache-Control', 'max-age=0, private, must-revalidate');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'SAMEORIGIN');
    if (header(c, 'origin') !== undefined && c.req.path.startsWith(`${apiPrefix}/`)) {
      c.header('Access-Control-Allow-Origin', '*');
      c.header('Access-Control-Allow-Methods', CORS_METHODS);
      c.header('Access-Control-Expose-Headers', CORS_EXPOSE);
      c.header('Access-Control-Max-Age', CORS_MAX_AGE);
      const requestedMethod = header(c, 'access-control-request-method');
      if (c.req.method === 'OPTIONS' && requestedMethod !== undefined) {
        // rack-cors answers the preflight itself: 200, empty, the requested headers allowed.
        const requestedHeaders = header(c, 'access-control-request-headers');
        if (requestedHeaders) c.header('Access-Control-Allow-Headers', requestedHeaders);
        return c.body(null, 200);
      }
    }
    await next();
  };

// ───────────────────────────── Body size ─────────────────────────────

const tooLarge = (c: Context) => {
  // The rest of the body is not read: the connection ends with this answer.
  c.header('Connection', 'close');
  return c.json({ message: '413 Request Entity Too Large' }, 413);
};

/**
 * Refuses a body over `maxBytes` before it is read: by its Content-Length at once, and a
 * chunked one as soon as the bytes read pass the limit (what was read is handed on).
 */
export const bodyLimit =
  (maxBytes: number): MiddlewareHandler =>
  async (c, next) => {
    const length = header(c, 'content-length');
    const chunked = header(c, 'transfer-encoding') !== undefined;
    if (length !== undefined && !chunked) {
      return Number(length) > maxBytes ? tooLarge(c) : next();
    }
    if (!chunked || c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const body = c.req.raw.body;
    if (!body) return next();
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return tooLarge(c);
      }
      chunks.push(value);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks), duplex: 'half' } as RequestInit);
    return next();
  };

// ───────────────────────────── Parameters ─────────────────────────────

const NUL_IN_PATH = /%00/;

/**
 * Parses the parameters before routing, so a body that does not parse or breaks the JSON
 * limits is a 400 for every caller (anonymous too). A NUL character (in the path, query or
 * body) or a lone surrogate is GitLab's Gitlab::Middleware::HandleNullBytes answer: 400 with
 * the text `Bad Request`.
 */
export const parameterGuard: MiddlewareHandler = async (c, next) => {
  const url = c.req.url;
  const query = url.indexOf('?');
  if (NUL_IN_PATH.test(query === -1 ? url : url.slice(0, query))) return badRequest(c);
  try {
    await rawParams(c);
  } catch (error) {
    if (error instanceof MalformedString) return badRequest(c);
    throw error;
  }
  return next();
};

const badRequest = (c: Context) => c.text('Bad Request', 400);
