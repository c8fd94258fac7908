import { Readable } from 'node:stream';
import { Hono, type Context } from 'hono';
import type { Db } from '../../database/database.js';
import { packObjects } from '../../domain/repository/pack.js';
import { FLUSH, type Packet, PktLineError, PktLineReader, sideband } from '../../domain/repository/pkt-line.js';
import {
  acknowledgments,
  advertiseV0,
  advertiseV2,
  deepens,
  errorPacket,
  type FetchOptions,
  lsRefs,
  negotiateV0,
  packfileHeader,
  parseV0,
  parseV2,
  type Refs,
  resolveDeepenNot,
  serviceHeader,
  shallowInfo,
  shallowUpdateV0,
  UploadPackError,
} from '../../domain/repository/upload-pack.js';
import { objectTypes, planFetch, reachableFromTips, readPlanned } from '../../projections/repository/reachable.js';
import { planShallow, type ShallowPlan } from '../../projections/repository/shallow.js';
import { listRefs } from '../../projections/repository/refs.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { header } from '../kernel/request.js';
import type { ProjectScope } from '../kernel/scope.js';
import { documented, mediaTypes } from '../kernel/documented.js';
import { GIT_REFUSED, gitHttp } from './git-http.js';
import { checkMediaType, GIT_AGENT, GitRequestRefusal, MAX_REQUEST_PACKETS, requestChunks, smartHeaders, smartPostDoc, tooManyPackets } from './git-smart.js';

/**
 * `git clone` and `git fetch` over git's smart HTTP protocol (gitprotocol-http), read side:
 * `GET …/info/refs?service=git-upload-pack` (the refs, or with `Git-Protocol: version=2` the
 * v2 capabilities) and `POST …/git-upload-pack` (v0's negotiation and pack; v2's `ls-refs` and
 * `fetch`), as git http-backend runs `git-upload-pack --stateless-rpc`. The pack is planned
 * from the object store (src/projections/repository/reachable.ts) and streamed a page of
 * objects at a time through side-band-64k.
 *
 * Access is the dumb protocol's (`gitHttp`, ./git-http.ts): authorized before the body is read.
 * Push (`git-receive-pack`) is not here; its routes would sit beside these, the same way.
 */

/** The largest request body, after gzip (git http-backend's default http.maxRequestBuffer is 10 MB). */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** Pack bytes gathered before a side-band packet is cut (one object's entry is often a few bytes). */
const FRAME_BYTES = 64 * 1024;

const RESULT = smartHeaders('git-upload-pack', 'result');

/** `Git-Protocol: version=2` (gitprotocol-http: the client's GIT_PROTOCOL, colon-separated). */
const wantsV2 = (c: Context) => (header(c, 'git-protocol') ?? '').split(':').includes('version=2');

/** The refs (listRefs, the merge requests' refs with them), and HEAD as the dumb protocol's HEAD names it. */
async function readRefs(db: Db, project: ProjectScope): Promise<Refs> {
  const refs = await listRefs(db, project.row.id, { mergeRequests: true });
  const target = `refs/heads/${project.row.default_branch ?? 'master'}`;
  return { refs, head: { target, sha: refs.find((ref) => ref.name === target)?.sha ?? null } };
}

/** The request body, inflated when gzipped, at most MAX_REQUEST_BYTES. */
async function readBody(c: Context): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of requestChunks(c)) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new GitRequestRefusal(413, 'Request Entity Too Large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function packetsOf(body: Buffer): Packet[] {
  const reader = new PktLineReader();
  const packets: Packet[] = [];
  try {
    for (const packet of reader.push(body)) {
      if (packets.length === MAX_REQUEST_PACKETS) throw tooManyPackets();
      packets.push(packet);
    }
    reader.end();
    return packets;
  } catch (error) {
    if (error instanceof PktLineError) throw new GitRequestRefusal(400, `Bad Request: ${error.message}`);
    throw error;
  }
}

/**
 * Wants must name a ref's object, or a commit reachable from one (allow-tip-sha1-in-want,
 * allow-reachable-sha1-in-want); else git's `not our ref`.
 */
async function checkWants(db: Db, projectId: number, refs: Refs, wants: readonly string[]): Promise<void> {
  const tips = new Set(refs.refs.flatMap((ref) => (ref.peeled ? [ref.sha, ref.peeled] : [ref.sha])));
  const others = [...new Set(wants.filter((sha) => !tips.has(sha)))];
  if (others.length === 0) return;
  const commits = refs.refs.map((ref) => ref.peeled ?? ref.sha);
  const reachable = await reachableFromTips(db, projectId, commits, others);
  const refused = others.find((sha) => !reachable.has(sha));
  // upload-pack.c: "upload-pack: not our ref %s"
  if (refused) throw new UploadPackError(`upload-pack: not our ref ${refused}`);
}

/** The haves that are objects of the project (upload-pack's got_oid). */
async function commonOf(db: Db, projectId: number, haves: readonly string[]): Promise<Set<string>> {
  return new Set((await objectTypes(db, projectId, haves)).keys());
}

/**
 * The pack, as upload-pack sends it: planned, then streamed through side-band (pack on band 1,
 * progress on band 2 unless `no-progress`, a flush at the end) or raw. A failure after the
 * answer has begun is reported on band 3 and cuts the stream.
 */
async function* packStream(c: Context, projectId: number, options: FetchOptions, shallow: ShallowPlan | null): AsyncGenerator<Buffer> {
  const { db, logger } = appContext(c);
  const max = options.sideband;
  const progress = max !== null && options.progress;
  try {
    const planned = await planFetch(db, projectId, {
      wants: shallow ? [...options.wants, ...shallow.wants] : options.wants,
      haves: options.haves,
      includeTag: options.includeTag,
      ...(shallow ? { shallow: { cut: shallow.cut, edges: shallow.edges } } : {}),
    });
    if (progress) yield sideband(2, `Enumerating objects: ${planned.length}, done.\n`, max);
    let pending: Buffer[] = [];
    let size = 0;
    for await (const chunk of packObjects(planned.length, readPlanned(db, projectId, planned))) {
      if (max === null) {
        yield chunk;
        continue;
      }
      pending.push(chunk);
      size += chunk.length;
      if (size >= FRAME_BYTES) {
        yield sideband(1, Buffer.concat(pending, size), max);
        pending = [];
        size = 0;
      }
    }
    if (max === null) return;
    if (size > 0) yield sideband(1, Buffer.concat(pending, size), max);
    if (progress) yield sideband(2, `Total ${planned.length} (delta 0), reused 0 (delta 0), pack-reused 0\n`, max);
    yield FLUSH;
  } catch (error) {
    logger.error({ err: error, request_id: c.var.requestId, project_id: projectId }, 'git-upload-pack failed while sending a pack');
    if (max !== null) yield sideband(3, 'upload-pack: the pack could not be written\n', max);
  }
}

const streamed = (c: Context, chunks: AsyncIterable<Buffer>) => c.body(Readable.toWeb(Readable.from(chunks)) as ReadableStream, 200, RESULT);

async function* concat(first: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  yield* rest;
}

/** A shallow request's boundary (src/projections/repository/shallow.ts), its deepen-not refs resolved as git resolves them. */
async function shallowPlanOf(c: Context, project: ProjectScope, refs: Refs, request: FetchOptions): Promise<ShallowPlan | null> {
  const deepenNot = request.shallow.deepenNot.map((name) => resolveDeepenNot(refs, name));
  const tips = refs.refs.map((ref) => ref.peeled ?? ref.sha);
  return planShallow(appContext(c).db, project.row.id, { request: request.shallow, wants: request.wants, tips, deepenNot });
}

/**
 * One stateless v0 round: the shallow update when the request deepens (a shallow client's
 * first request stops there), the acknowledgments, and after `done` the pack.
 */
async function uploadPackV0(c: Context, project: ProjectScope, packets: Packet[]): Promise<Response> {
  const { db } = appContext(c);
  const request = parseV0(packets);
  // upload-pack.c: no wants, nothing to say.
  if (request.wants.length === 0) return c.body(null, 200, RESULT);
  const refs = await readRefs(db, project);
  await checkWants(db, project.row.id, refs, request.wants);
  const shallow = await shallowPlanOf(c, project, refs, request);
  // receive_needs: the shallow lines and a flush, before any ACK, each round.
  const update = shallow && deepens(request.shallow) ? shallowUpdateV0(shallow) : Buffer.alloc(0);
  if (!request.negotiates && deepens(request.shallow)) return c.body(new Uint8Array(update), 200, RESULT);
  const answer = Buffer.concat([update, negotiateV0(request, await commonOf(db, project.row.id, request.haves))]);
  if (!request.done) return c.body(new Uint8Array(answer), 200, RESULT);
  return streamed(c, concat(answer, packStream(c, project.row.id, request, shallow)));
}

/** One v2 command: ls-refs, or fetch (acknowledgments while not done; the packfile section). */
async function uploadPackV2(c: Context, project: ProjectScope, packets: Packet[]): Promise<Response> {
  const { db } = appContext(c);
  const request = parseV2(packets);
  if (request.command === 'ls-refs') return c.body(new Uint8Array(lsRefs(await readRefs(db, project), request)), 200, RESULT);
  // upload-pack.c (upload_pack_v2): no wants, nothing to send.
  if (request.wants.length === 0) return c.body(null, 200, RESULT);
  const refs = await readRefs(db, project);
  await checkWants(db, project.row.id, refs, request.wants);
  // With haves and without `done`, only the acknowledgments (no `ready` is ever sent); with no
  // haves the pack comes at once, as upload-pack does.
  if (!request.done && request.haves.length > 0) return c.body(new Uint8Array(acknowledgments(request.haves, await commonOf(db, project.row.id, request.haves))), 200, RESULT);
  // send_shallow_info: a `shallow-info` section before the pack when the request deepens or the client is shallow.
  const shallow = await shallowPlanOf(c, project, refs, request);
  const head = shallow ? Buffer.concat([shallowInfo(shallow), packfileHeader()]) : packfileHeader();
  return streamed(c, concat(head, packStream(c, project.row.id, request, shallow)));
}

export const gitUploadPackRoutes = new Hono<AppEnv>()
  // Mounted before the dumb routes: an info/refs without `?service=git-upload-pack` goes on to them.
  // Documented here for the three services of the path: fetch, push (./git-receive-pack.ts) and the dumb list (./git-http.ts).
  .get(
    '/:repo{.+\\.git}/info/refs',
    documented({
      summary: "The repository's refs: the smart advertisement of `?service=git-upload-pack` (fetch; protocol v2 with `Git-Protocol: version=2`) or `?service=git-receive-pack` (push), else the dumb protocol's list",
      auth: 'optional',
      responses: { 200: mediaTypes('application/x-git-upload-pack-advertisement', 'application/x-git-receive-pack-advertisement', 'text/plain'), ...GIT_REFUSED },
    }),
    async (c, next) => {
      if (c.req.query('service') !== 'git-upload-pack') return next();
      return gitHttp(async (c, project) => {
        const headers = smartHeaders('git-upload-pack', 'advertisement');
        // http-backend.c: a v2 answer has no `# service=` header.
        if (wantsV2(c)) return c.body(new Uint8Array(advertiseV2(GIT_AGENT)), 200, headers);
        const refs = await readRefs(appContext(c).db, project);
        return c.body(new Uint8Array(Buffer.concat([serviceHeader(), advertiseV0(refs, GIT_AGENT)])), 200, headers);
      })(c);
    },
  )

  .post(
    '/:repo{.+\\.git}/git-upload-pack',
    smartPostDoc('git-upload-pack', 'Fetch: negotiate and receive a pack (protocol v0 or, with `Git-Protocol: version=2`, v2)'),
    gitHttp(async (c, project) => {
      try {
        checkMediaType(c, 'git-upload-pack');
        const packets = packetsOf(await readBody(c));
        return await (wantsV2(c) ? uploadPackV2(c, project, packets) : uploadPackV0(c, project, packets));
      } catch (error) {
        if (error instanceof GitRequestRefusal) return c.text(`${error.message}\n`, error.status);
        if (error instanceof UploadPackError) return c.body(new Uint8Array(errorPacket(error.message)), 200, RESULT);
        throw error;
      }
    }),
  );
