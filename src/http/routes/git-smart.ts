import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Context } from 'hono';
import { VERSION } from '../../version.js';
import { documented, mediaTypes, RAW_TEXT } from '../kernel/documented.js';
import { header } from '../kernel/request.js';
import { GIT_REFUSED } from './git-http.js';

/**
 * What git's two smart HTTP services share (./git-upload-pack.ts, ./git-receive-pack.ts), as
 * git http-backend answers them: the agent, the headers, a request's refusal before the
 * service runs, and the request body as it arrives.
 */

export const GIT_AGENT = `forgelog/${VERSION}`;

/** http-backend's hdr_nocache, with the service's content type (`advertisement` or `result`). */
export const smartHeaders = (service: 'git-upload-pack' | 'git-receive-pack', kind: 'advertisement' | 'result') => ({
  Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  Pragma: 'no-cache',
  'Cache-Control': 'no-cache, max-age=0, must-revalidate',
  'Content-Type': `application/x-${service}-${kind}`,
});

/** A request http-backend refuses before the service runs: plain text with its status. */
export class GitRequestRefusal extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The most pkt-lines a request's parsed part holds (upload-pack's whole request, receive-pack's
 * command list): a packet can be four bytes, and each one kept costs ~150 bytes, so the byte
 * bounds alone would let a 10 MB body take 400 MB. A want or have line is 49 bytes, so a
 * 10 MB request of them stays below this.
 */
export const MAX_REQUEST_PACKETS = 250_000;

export const tooManyPackets = () => new GitRequestRefusal(413, `Request Entity Too Large: more than ${MAX_REQUEST_PACKETS} pkt-lines`);

/**
 * The documentation of a smart protocol's POST: the service's request in, its result out; besides
 * git's refusals, plain-text 400 (a body that does not parse), 413 (too large), 415 (another
 * media type or encoding).
 */
export const smartPostDoc = (service: 'git-upload-pack' | 'git-receive-pack', summary: string) =>
  documented({
    summary,
    auth: 'optional',
    requestType: `application/x-${service}-request`,
    responses: { 200: mediaTypes(`application/x-${service}-result`), ...GIT_REFUSED, 400: RAW_TEXT, 413: RAW_TEXT, 415: RAW_TEXT },
  });

/** http-backend.c: a POST of another media type is 415. */
export function checkMediaType(c: Context, service: 'git-upload-pack' | 'git-receive-pack'): void {
  if ((header(c, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase() !== `application/x-${service}-request`) {
    throw new GitRequestRefusal(415, 'Unsupported Media Type');
  }
}

/**
 * The request body's chunks as they arrive, inflated when gzipped (git gzips a large
 * request): another encoding is 415, a body that is not gzip 400. The caller bounds what it
 * takes by what it counts, and stops reading there.
 */
export async function* requestChunks(c: Context): AsyncGenerator<Uint8Array> {
  const body = c.req.raw.body;
  if (!body) return;
  const raw = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  const encoding = (header(c, 'content-encoding') ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') {
    yield* raw;
    return;
  }
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new GitRequestRefusal(415, `Unsupported Content-Encoding: ${encoding}`);
  const gunzip = createGunzip();
  raw.on('error', (error) => gunzip.destroy(error));
  try {
    yield* raw.pipe(gunzip);
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('Z_')) throw new GitRequestRefusal(400, 'Bad Request: the body is not valid gzip');
    throw error;
  }
}
