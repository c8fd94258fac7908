import { constants } from 'node:buffer';
import { Hono, type Context } from 'hono';
import { pushRefs, PushRefused, type PushedRef, receivedObjects } from '../../commands/repository-push.js';
import { handlePushOptions } from '../../commands/repository-push-options.js';
import { alertLines, parsePushOptions, pushOptionsWarning } from '../../domain/repository/push-options.js';
import type { GitObject } from '../../domain/repository/objects.js';
import { PackError, PackTooLarge, readPack } from '../../domain/repository/pack-read.js';
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
  requestCapabilities,
  ZERO_SHA,
} from '../../domain/repository/receive.js';
import { findObject } from '../../projections/repository/queries.js';
import { listRefs } from '../../projections/repository/refs.js';
import { writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { type ProjectScope, userProject } from '../kernel/scope.js';
import type { ProjectAbility } from '../../domain/policy/project.js';
import { defaultMergeRequestTarget } from '../../projections/projects/merge-request-target.js';
import { gitHttp } from './git-http.js';
import { checkMediaType, GIT_AGENT, GitRequestRefusal, MAX_REQUEST_PACKETS, requestChunks, smartHeaders, smartPostDoc, tooManyPackets } from './git-smart.js';
import { collaboratingWriter } from './repository-access.js';

/**
 * `git push` over git's smart HTTP protocol (gitprotocol-http), as git http-backend runs
 * `git-receive-pack --stateless-rpc`: `GET …/info/refs?service=git-receive-pack` (the refs and
 * capabilities) and `POST …/git-receive-pack` (the commands, the pack; the report-status
 * answer). Access is GitLab's git HTTP for pushes (`gitHttp`, ./git-http.ts: push_code, a token
 * of scope api or write_repository), decided before the body is read. The body is read as a
 * stream up to FORGELOG_MAX_PUSH_BYTES (the API's body limit does not apply: app.ts), then
 * the pack is read (its objects, inflated, up to the same limit: pushLimit), checked and
 * connected, and the refs written in one command (src/commands/repository-push.ts). See
 * docs/repository.md, "Pushing with git".
 */

const RESULT = smartHeaders('git-receive-pack', 'result');

interface PushBody {
  readonly packets: readonly Packet[];
  /** The bytes after the commands' flush: the pack (empty when every command deletes). */
  readonly pack: Buffer;
  /** The body passed the limit: reading stopped there, the pack is not whole. */
  readonly tooLarge: boolean;
}

/**
 * The commands up to their flush (and the push options up to theirs, when the first command
 * asks for `push-options`), then the pack, at most `limit` bytes in all (after gzip): past it
 * reading stops, the rest is never read nor kept. The commands and options are at most
 * MAX_REQUEST_PACKETS pkt-lines.
 */
async function readPushBody(c: Context, limit: number): Promise<PushBody> {
  const reader = new PktLineReader();
  const packets: Packet[] = [];
  const pack: Buffer[] = [];
  let commandsRead = false;
  let flushes = 0;
  let sections = 1;
  let size = 0;
  try {
    for await (const chunk of requestChunks(c)) {
      size += chunk.length;
      if (size > limit) return { packets, pack: Buffer.alloc(0), tooLarge: true };
      if (commandsRead) {
        pack.push(Buffer.from(chunk));
        continue;
      }
      for (const packet of reader.push(chunk)) {
        if (packets.length === MAX_REQUEST_PACKETS) throw tooManyPackets();
        packets.push(packet);
        if (packets.length === 1 && requestCapabilities(packet).has('push-options')) sections = 2;
        if (packet.type === 'flush' && ++flushes === sections) {
          commandsRead = true;
          break;
        }
      }
      if (commandsRead) pack.push(reader.rest());
    }
    if (!commandsRead) reader.end();
  } catch (error) {
    if (error instanceof PktLineError) throw new GitRequestRefusal(400, `Bad Request: ${error.message}`);
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

/**
 * What a push may hold: FORGELOG_MAX_PUSH_BYTES of body (the pack), and as much again of the
 * pack's objects once inflated (deltas' instructions and results included: all of them are in
 * memory until they are stored), so the setting bounds what a push costs the process. Never
 * more than a buffer can hold (the pack is one).
 */
const pushLimit = (c: Context): number => Math.min(appContext(c).config.maxPushBytes, constants.MAX_LENGTH);

/** index-pack's words for a pack past receive.maxInputSize. */
const tooLarge = (commands: readonly PushCommand[], limit: number): Report => ({
  unpack: 'pack exceeds maximum allowed size',
  refs: allRefused(commands, 'unpacker error'),
  messages: [`fatal: pack exceeds maximum allowed size (${limit} bytes)\n`],
});

/**
 * After a push that wrote its refs, its `merge_request.*` options (PostReceiveService, 12.10):
 * the handler's errors as GitLab's warning alert on the pusher's `remote:` lines. The push
 * stands whatever happens here.
 */
async function pushOptionMessages(c: Context, project: ProjectScope, commands: readonly PushCommand[], raw: readonly string[]): Promise<string[]> {
  const options = parsePushOptions(raw).mergeRequest;
  const viewer = project.viewer;
  if (options === null || viewer === null) return [];
  const targetId = await defaultMergeRequestTarget(appContext(c).db, project.row);
  // The upstream as the pusher sees it: none when they may not read it (CreateService's AccessDeniedError then).
  const target = targetId === project.row.id ? project : await userProject(c, c.var.auth, undefined, String(targetId)).catch(() => null);
  const may = (ability: ProjectAbility) => target?.can(ability) ?? false;
  const errors = await handlePushOptions(writerFor(c, c.var.auth), {
    projectId: project.row.id,
    targetProjectId: targetId,
    userId: viewer.id,
    changes: commands.map((cmd) => ({ ref: cmd.ref, newSha: cmd.newSha })),
    options,
    may: {
      create: project.can('create_merge_request_from') && may('create_merge_request_in'),
      update: may('update_merge_request'),
      read: may('read_merge_request'),
      admin: may('admin_merge_request'),
      adminLabel: may('admin_label'),
    },
    onUnknownError: (error, branch) =>
      appContext(c).logger.error({ err: error, request_id: c.var.requestId, project_id: project.row.id, branch }, 'push options: the merge request could not be written'),
  });
  return errors.length === 0 ? [] : alertLines(pushOptionsWarning(raw, errors));
}

/** The push, decided: what report-status says. */
async function receive(c: Context, project: ProjectScope, commands: readonly PushCommand[], body: PushBody, pushOptions: readonly string[] = []): Promise<Report> {
  const { db } = appContext(c);
  const projectId = project.row.id;
  const limit = pushLimit(c);
  if (body.tooLarge) return tooLarge(commands, limit);
  let objects: GitObject[] = [];
  if (expectsPack(commands)) {
    try {
      objects = await readPack(body.pack, { base: (sha) => baseOf(c, projectId, sha), bases: (shas) => basesOf(c, projectId, shas), maxTotalBytes: limit });
    } catch (error) {
      if (error instanceof PackTooLarge) return tooLarge(commands, limit);
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
    await pushRefs(writerFor(c, c.var.auth), { projectId, writer: (await collaboratingWriter(c, project))!, refs, objects: received.objects });
  } catch (error) {
    if (!(error instanceof PushRefused)) throw error;
    return { unpack: null, refs: commands.map((cmd) => ({ ref: cmd.ref, error: error.reasons.get(cmd.ref) ?? error.others })), messages: error.messages };
  }
  return { unpack: null, refs: commands.map((cmd) => ({ ref: cmd.ref, error: null })), messages: await pushOptionMessages(c, project, commands, pushOptions) };
}

export const gitReceivePackRoutes = new Hono<AppEnv>()
  // Mounted before the fetch and dumb routes: an info/refs for another service goes on to them.
  .get('/:repo{.+\\.git}/info/refs', async (c, next) => {
    if (c.req.query('service') !== 'git-receive-pack') return next();
    return gitHttp(async (c, project) => {
      // Advertised as they are: receive-pack lists no peeled tags.
      const refs = await listRefs(appContext(c).db, project.row.id);
      const body = Buffer.concat([receiveServiceHeader(), advertiseReceivePack(refs, GIT_AGENT)]);
      return c.body(new Uint8Array(body), 200, smartHeaders('git-receive-pack', 'advertisement'));
    }, 'git-receive-pack')(c);
  })

  .post(
    '/:repo{.+\\.git}/git-receive-pack',
    smartPostDoc('git-receive-pack', 'Push: update refs with a pack, answered with a report-status'),
    gitHttp(async (c, project) => {
      try {
        checkMediaType(c, 'git-receive-pack');
        const body = await readPushBody(c, pushLimit(c));
        const request = parseCommands(body.packets);
        if (request.commands.length === 0) return c.body(null, 200, RESULT);
        if (body.packets.at(-1)?.type !== 'flush') {
          // The limit came before the commands' end, or the body ended without it.
          throw body.tooLarge ? new GitRequestRefusal(413, 'Request Entity Too Large') : new GitRequestRefusal(400, 'Bad Request: the command list has no flush');
        }
        const report = await receive(c, project, request.commands, body, request.pushOptions);
        const sideband = request.capabilities.has('side-band-64k');
        return c.body(new Uint8Array(reportStatus(report, sideband)), 200, RESULT);
      } catch (error) {
        if (error instanceof GitRequestRefusal) return c.text(`${error.message}\n`, error.status);
        if (error instanceof ReceivePackError) return c.text(`fatal: ${error.message}\n`, 400);
        throw error;
      }
    }, 'git-receive-pack'),
  );
