import { sql } from 'kysely';
import { unhandled } from '../domain/decider.js';
import { type ContainerRepositoryCommand, type ContainerRepositoryEvent, type PushedTag } from '../domain/container-repositories/decider.js';
import { isDigest, isImagePath, isTagName, projectPathCandidates, repositoryName } from '../domain/container-repositories/path.js';
import { DomainError } from '../domain/errors.js';
import type { StoredEvent } from '../eventstore/types.js';
import { claimHolder } from '../projections/projects/queries.js';
import { nextId } from './kernel/handler.js';
import { causedBy } from './kernel/causation.js';
import { run } from './kernel/run.js';
import { containerRepositories } from '../domain/container-repositories/aggregate.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';


// ───────────────────────────── Registry notifications ─────────────────────────────

/** One event of the registry's notification envelope, as far as forgelog reads it. */
export interface RegistryEvent {
  readonly id: string | null;
  readonly action: string;
  readonly timestamp: string | null;
  readonly target: {
    readonly repository: string | null;
    readonly tag: string | null;
    readonly digest: string | null;
    readonly size: number | null;
    /** distribution ≥ 2.7: the manifest's layers and configuration. */
    readonly references: readonly { readonly mediaType: string | null; readonly digest: string | null; readonly size: number | null }[];
  };
}

const CONFIG_MEDIA_TYPES = new Set(['application/vnd.docker.container.image.v1+json', 'application/vnd.oci.image.config.v1+json']);

/**
 * What a pushed tag records from its notification: GitLab's Tag#revision is the image
 * configuration's digest (hex) and total_size the sum of the layers, both read from the
 * manifest; the notification names them in `references` when the registry sends those, and
 * the manifest's own size stands for total_size otherwise. created_at: the notification's
 * timestamp (GitLab reads the configuration's `created`, which no notification carries).
 */
function pushedTag(event: RegistryEvent, tag: string, digest: string, at: Date): PushedTag | string {
  const config = event.target.references.find((ref) => ref.mediaType !== null && CONFIG_MEDIA_TYPES.has(ref.mediaType));
  const layers = event.target.references.filter((ref) => ref !== config);
  const revision = config?.digest?.split(':').pop() ?? null;
  const totalSize = layers.length > 0 && layers.every((l) => l.size !== null) ? layers.reduce((sum, l) => sum + l.size!, 0) : event.target.size;
  const stamp = event.timestamp === null ? NaN : Date.parse(event.timestamp);
  const createdAt = new Date(Number.isNaN(stamp) ? at.getTime() : stamp);
  if (!storableYear(createdAt)) return `timestamp ${JSON.stringify(event.timestamp)} is outside the years 1 to 9999`;
  return { tag, digest, revision, totalSize, createdAt: createdAt.toISOString() };
}

/** Years PostgreSQL's timestamptz stores and an ISO 8601 string writes with four digits (as the parameter kernel's dates). */
const storableYear = (date: Date) => date.getUTCFullYear() >= 1 && date.getUTCFullYear() <= 9999;

/** A notification's event forgelog could not record, and why: the route logs it, the rest of the envelope is recorded. */
export interface SkippedRegistryEvent {
  readonly id: string | null;
  readonly action: string;
  readonly repository: string;
  readonly tag: string | null;
  readonly reason: string;
}

/** The project an image path belongs to (the longest of ContainerRegistry::Path's candidates), and the repository's name. */
async function locate(ctx: CommandContext, path: string): Promise<{ projectId: number; name: string } | undefined> {
  const candidates = projectPathCandidates(path);
  const { rows } = await sql<{ id: number; path: string }>`
    select id, lower(path_with_namespace) as path from projects
    where lower(path_with_namespace) = any(${candidates}) and not pending_delete
    order by length(path_with_namespace) desc limit 1`.execute(ctx.db);
  const project = rows[0];
  return project && { projectId: project.id, name: repositoryName(path, project.path) };
}

const repositoryIdOf = async (ctx: CommandContext, projectId: number, name: string) => {
  const stream = await claimHolder(ctx.db, 'container_repository_name', `${projectId}/${name}`);
  return stream === undefined ? undefined : Number(stream.slice(stream.lastIndexOf('-') + 1));
};

/**
 * A push: the repository's stream if it exists, else a new one. Two first pushes racing for
 * the same path: one takes the path's claim, the other finds it taken and pushes to that one.
 */
async function pushTo(w: Writer, projectId: number, name: string, command: ContainerRepositoryCommand) {
  for (let attempt = 0; ; attempt++) {
    const id = (await repositoryIdOf(w.ctx, projectId, name)) ?? (await nextId(w.ctx.db, 'container_repositories_id_seq'));
    try {
      await run(w, containerRepositories, id, command);
      return;
    } catch (error) {
      const raced = error instanceof DomainError && (error.code === 'conflict' || error.code === 'not_found');
      if (!raced || attempt >= 2) throw error;
    }
  }
}

/**
 * GitLab's ContainerRegistry::Event, for the actions it supports (push, delete): a push of a
 * tag creates the repository if needed and records the tag; a delete removes the tag, or every
 * tag of the deleted manifest. An event naming no project, or not in the registry's grammar,
 * is ignored, as GitLab ignores it. A push whose timestamp PostgreSQL cannot store is skipped
 * and answered among the skipped events (GitLab 12.10 never reads the timestamp): the others
 * of the envelope are recorded all the same.
 */
export async function receiveRegistryEvents(w: Writer, events: readonly RegistryEvent[]): Promise<SkippedRegistryEvent[]> {
  const skipped: SkippedRegistryEvent[] = [];
  for (const event of events) {
    const { repository: path, tag, digest } = event.target;
    if (path === null || !isImagePath(path)) continue;
    if (tag !== null && !isTagName(tag)) continue;
    if (digest !== null && !isDigest(digest)) continue;
    const located = await locate(w.ctx, path);
    if (!located) continue;
    const { projectId, name } = located;
    if (event.action === 'push') {
      // A push without a tag is a blob or a manifest by digest: no tag to record.
      if (tag === null || digest === null) continue;
      const pushed = pushedTag(event, tag, digest, w.ctx.now());
      if (typeof pushed === 'string') {
        // One event the log cannot hold must not refuse the envelope: the registry would
        // resend it, and every other event in it, for ever.
        skipped.push({ id: event.id, action: event.action, repository: path, tag, reason: pushed });
        continue;
      }
      const command: ContainerRepositoryCommand = { type: 'PushTag', projectId, name, registryEventId: event.id, ...pushed };
      await pushTo(w, projectId, name, command);
    } else if (event.action === 'delete') {
      if (tag === null && digest === null) continue;
      const id = await repositoryIdOf(w.ctx, projectId, name);
      if (id === undefined) continue;
      await ignoringGone(run(w, containerRepositories, id, { type: 'DeleteFromRegistry', tag, digest: tag === null ? digest : null, registryEventId: event.id }));
    }
  }
  return skipped;
}

/** A repository removed meanwhile has nothing left to do. */
async function ignoringGone(run: Promise<unknown>): Promise<void> {
  try {
    await run;
  } catch (error) {
    if (!(error instanceof DomainError && error.code === 'not_found')) throw error;
  }
}

// ───────────────────────────── Reactors ─────────────────────────────

type Scheduled = Extract<ContainerRepositoryEvent, { type: 'ContainerRepositoryCleanupScheduled' | 'ContainerRepositoryDeletionScheduled' }>;


/**
 * GitLab's CleanupContainerRepositoryWorker (the bulk tag deletion, its rules applied when it
 * runs, by the command clock) and DeleteContainerRepositoryWorker (a repository's removal).
 * Idempotent: a repository already gone appends nothing.
 */
export const containerRepositoryReactor: Reactor = {
  name: 'container-repository-cleanup',
  handles: ['ContainerRepositoryCleanupScheduled', 'ContainerRepositoryDeletionScheduled'] satisfies Scheduled['type'][],
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as Scheduled;
    const w = causedBy(ctx, stored);
    switch (event.type) {
      case 'ContainerRepositoryCleanupScheduled': {
        const { id, name_regex_delete, name_regex_keep, keep_n, older_than } = event.data;
        const rules = { nameRegexDelete: name_regex_delete, nameRegexKeep: name_regex_keep, keepN: keep_n, olderThan: older_than };
        await ignoringGone(run(w, containerRepositories, id, { type: 'CleanUpTags', rules, now: ctx.now().toISOString() }));
        return;
      }
      case 'ContainerRepositoryDeletionScheduled':
        await ignoringGone(run(w, containerRepositories, event.data.id, { type: 'DeleteRepository' }));
        return;
      default:
        return unhandled(event);
    }
  },
};
