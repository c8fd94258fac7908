import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Hono, type Context } from 'hono';
import { pushRefs, PushRefused, type PushedRef, receivedObjects } from '../../commands/repository-push.js';
import type { GitObject } from '../../domain/repository/objects.js';
import { PackError, readPack } from '../../domain/repository/pack-read.js';
import { type Packet, PktLineError, PktLineReader } from '../../domain/repository/pkt-line.js';
import {
  advertiseReceivePack,
  classify,
  expectsPack,
  FsckError,
  parseCommands,
  type PushCommand,
  ReceivePackError,
  receiveServiceHeader,
  type RefStatus,
  type Report,
  reportStatus,
  ZERO_SHA,
} from '../../domain/repository/receive.js';
import { findObject, listBranches } from '../../projections/repository/queries.js';
import { listTags } from '../../projections/repository/tags.js';
import { VERSION } from '../../version.js';
import { writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { header } from '../kernel/request.js';
import type { ProjectScope } from '../kernel/scope.js';
import { gitHttp } from './git-http.js';
import { refWriter } from './repository-access.js';

/**
 * `git push` over git's smart HTTP protocol (gitprotocol-http), as git http-backend runs
 * `git-receive-pack --stateless-rpc`: `GET …/info/refs?service=git-receive-pack` (the refs and
 * capabilities) and `POST …/git-receive-pack` (the commands, the pack; the report-status
 * answer). Access is GitLab's git HTTP for pushes (`gitHttp`, ./git-http.ts: push_code, a token
 * of scope api or write_repository), decided before the body is read. The body is read as a
 * stream up to FORGELOG_MAX_PUSH_BYTES (the API's body limit does not apply: app.ts), then
 * the pack is read, checked and connected, and the refs written in one command
 * (src/commands/repository-push.ts). See docs/repository.md, "Pushing with git".
 */

const AGENT = `forgelog/${VERSION}`;

// git http-backend's hdr_nocache.
const NO_CACHE = { Expires: 'Fri, 01 Jan 1980 00:00:00 GMT', Pragma: 'no-cache', 'Cache-Control': 'no-cache, max-age=0, must-revalidate' };
const RESULT = { ...NO_CACHE, 'Content-Type': 'application/x-git-receive-pack-result' };

/** A request git http-backend refuses before receive-pack runs: plain text with its status. */
class RequestRefusal extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

interface PushBody {
  readonly packets: readonly Packet[];
  /** The bytes after the commands' flush: the pack (empty when every command deletes). */
  readonly pack: Buffer;
  /** The body passed the limit: reading stopped there, the pack is not whole. */
  readonly tooLarge: boolean;
}

/** The request body's chunks, inflated when gzipped. */
function bodyChunks(c: Context): AsyncIterable<Uint8Array> {
  const body = c.req.raw.body;
  if (!body) return Readable.from([]);
  const raw = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  const encoding = (header(c, 'content-encoding') ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') throw new RequestRefusal(415, `Unsupported Content-Encoding: ${encoding}`);
  const gunzip = createGunzip();
  raw.on('error', (error) => gunzip.destroy(error));
  return raw.pipe(gunzip);
}

/**
 * The commands up to their flush, then the pack, at most `limit` bytes in all (after gzip):
 * past it reading stops, the rest is never read nor kept.
 */
async function readPushBody(c: Context, limit: number): Promise<PushBody> {
  const reader = new PktLineReader();
  const packets: Packet[] = [];
  const pack: Buffer[] = [];
  let commandsRead = false;
  let size = 0;
  try {
    for await (const chunk of bodyChunks(c)) {
      size += chunk.length;
      if (size > limit) return { packets, pack: Buffer.alloc(0), tooLarge: true };
      if (commandsRead) {
        pack.push(Buffer.from(chunk));
        continue;
      }
      for (const packet of reader.push(chunk)) {
        packets.push(packet);
        if (packet.type === 'flush') {
          commandsRead = true;
          break;
        }
      }
      if (commandsRead) pack.push(reader.rest());
    }
    if (!commandsRead) reader.end();
  } catch (error) {
    if (error instanceof PktLineError) throw new RequestRefusal(400, `Bad Request: ${error.message}`);
    if (error instanceof RequestRefusal) throw error;
    if ((error as { code?: string }).code?.startsWith('Z_')) throw new RequestRefusal(400, 'Bad Request: the body is not valid gzip');
    throw error;
  }
  return { packets, pack: Buffer.concat(pack), tooLarge: false };
}

/** An object of the repository, as a thin pack's delta base. */
async function baseOf(c: Context, projectId: number, sha: string): Promise<GitObject | undefined> {
  const row = await findObject(appContext(c).db, projectId, sha);
  return row && { sha: row.sha, type: row.type, content: new Uint8Array(row.content) };
}

/** A thin pack's outside bases in one statement. */
async function basesOf(c: Context, projectId: number, shas: readonly string[]): Promise<ReadonlyMap<string, GitObject>> {
  const rows = await appContext(c)
    .db.selectFrom('repository_objects')
    .select(['sha', 'type', 'content'])
    .where('project_id', '=', projectId)
    .where('sha', 'in', [...shas])
    .execute();
  return new Map(rows.map((row) => [row.sha, { sha: row.sha, type: row.type, content: new Uint8Array(row.content) }]));
}

/** Every command refused the same way (an unpack failure: git's `unpacker error`). */
const allRefused = (commands: readonly PushCommand[], reason: string): RefStatus[] => commands.map((c) => ({ ref: c.ref, error: reason }));

/** The push, decided: what report-status says. */
async function receive(c: Context, project: ProjectScope, commands: readonly PushCommand[], body: PushBody): Promise<Report> {
  const { db, config } = appContext(c);
  const projectId = project.row.id;
  if (body.tooLarge) {
    // index-pack's words for a pack past receive.maxInputSize.
    return { unpack: 'pack exceeds maximum allowed size', refs: allRefused(commands, 'unpacker error'), messages: [`fatal: pack exceeds maximum allowed size (${config.maxPushBytes} bytes)\n`] };
  }
  let objects: GitObject[] = [];
  if (expectsPack(commands)) {
    try {
      objects = await readPack(body.pack, { base: (sha) => baseOf(c, projectId, sha), bases: (shas) => basesOf(c, projectId, shas) });
    } catch (error) {
      if (!(error instanceof PackError)) throw error;
      return { unpack: error.message, refs: allRefused(commands, 'unpacker error'), messages: [`fatal: ${error.message}\n`] };
    }
  }
  const updates = commands.map(classify);
  const refused = updates.filter((u) => u.kind === 'refused');
  if (refused.length > 0) {
    // git's atomic push: the refused command's reason, `atomic push failure` for the others.
    const reasons = new Map(refused.map((u) => [u.ref, u.reason]));
    return { unpack: null, refs: commands.map((cmd) => ({ ref: cmd.ref, error: reasons.get(cmd.ref) ?? 'atomic push failure' })), messages: [] };
  }
  const refs = updates as PushedRef[];
  const tips = [...new Set(refs.filter((r) => r.newSha !== ZERO_SHA).map((r) => r.newSha))];
  let received;
  try {
    received = await receivedObjects(db, projectId, objects, tips);
  } catch (error) {
    if (!(error instanceof FsckError)) throw error;
    // index-pack --strict (receive.fsckObjects) refuses the pack.
    return { unpack: `fsck error in packed object: ${error.message}`, refs: allRefused(commands, 'unpacker error'), messages: [`error: ${error.message}\n`] };
  }
  if (received.missing.length > 0) {
    return {
      unpack: null,
      refs: commands.map((cmd) => ({ ref: cmd.ref, error: cmd.newSha === ZERO_SHA ? 'atomic push failure' : 'missing necessary objects' })),
      messages: received.missing.slice(0, 10).map((sha) => `error: object ${sha} is missing\n`),
    };
  }
  try {
    await pushRefs(writerFor(c, c.var.auth), { projectId, writer: refWriter(c, project)!, refs, objects: received.objects });
  } catch (error) {
    if (!(error instanceof PushRefused)) throw error;
    return { unpack: null, refs: commands.map((cmd) => ({ ref: cmd.ref, error: error.reasons.get(cmd.ref) ?? error.others })), messages: error.messages };
  }
  return { unpack: null, refs: commands.map((cmd) => ({ ref: cmd.ref, error: null })), messages: [] };
}

export const gitReceivePackRoutes = new Hono<AppEnv>()
  // Mounted before the fetch and dumb routes: an info/refs for another service goes on to them.
  .get('/:repo{.+\\.git}/info/refs', async (c, next) => {
    if (c.req.query('service') !== 'git-receive-pack') return next();
    return gitHttp(async (c, project) => {
      const { db } = appContext(c);
      const [branches, tags] = await Promise.all([listBranches(db, project.row.id), listTags(db, project.row.id)]);
      const refs = [...branches.map((b) => ({ name: `refs/heads/${b.name}`, sha: b.sha })), ...tags.map((t) => ({ name: `refs/tags/${t.name}`, sha: t.target }))].sort((a, b) =>
        Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)),
      );
      const body = Buffer.concat([receiveServiceHeader(), advertiseReceivePack(refs, AGENT)]);
      return c.body(new Uint8Array(body), 200, { ...NO_CACHE, 'Content-Type': 'application/x-git-receive-pack-advertisement' });
    }, 'git-receive-pack')(c);
  })

  .post(
    '/:repo{.+\\.git}/git-receive-pack',
    gitHttp(async (c, project) => {
      try {
        // http-backend.c: another media type is 415.
        if ((header(c, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/x-git-receive-pack-request') {
          throw new RequestRefusal(415, 'Unsupported Media Type');
        }
        const body = await readPushBody(c, appContext(c).config.maxPushBytes);
        const request = parseCommands(body.packets);
        if (request.commands.length === 0) return c.body(null, 200, RESULT);
        if (body.packets.at(-1)?.type !== 'flush') {
          // The limit came before the commands' end, or the body ended without it.
          throw body.tooLarge ? new RequestRefusal(413, 'Request Entity Too Large') : new RequestRefusal(400, 'Bad Request: the command list has no flush');
        }
        const report = await receive(c, project, request.commands, body);
        const sideband = request.capabilities.has('side-band-64k');
        return c.body(new Uint8Array(reportStatus(report, sideband)), 200, RESULT);
      } catch (error) {
        if (error instanceof RequestRefusal) return c.text(`${error.message}\n`, error.status);
        if (error instanceof ReceivePackError) return c.text(`fatal: ${error.message}\n`, 400);
        throw error;
      }
    }, 'git-receive-pack'),
  );
