import { z } from 'zod';
import { type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from '../decider.js';
import { notFound, recordNotFound, serviceError } from '../errors.js';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';
import { type CleanupRules, tagsToDelete } from './cleanup.js';

/**
 * Container repositories of a project (GitLab's ContainerRepository) and their tags, as the
 * registry reports them: one aggregate per repository, stream `container_repository-<id>`.
 * The registry's notifications create repositories and push or delete tags; the API deletes
 * tags, schedules a repository's removal and the bulk tag deletion, which reactors carry out.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofRepository = { id: z.int(), project_id: z.int() };
/** The registry's notification id, when it gave one: a notification delivered twice changes nothing. */
const registryEventId = z.string().nullable();

export const containerRepositoryEvents = {
  ContainerRepositoryCreated: z.strictObject({ ...ofRepository, name: z.string() }),
  ContainerRepositoryTagPushed: z.strictObject({
    ...ofRepository,
    tag: z.string(),
    digest: z.string(),
    /** The image configuration's digest (hex), GitLab's Tag#revision; null when the registry did not name it. */
    revision: z.string().nullable(),
    total_size: z.int().nullable(),
    created_at: z.iso.datetime(),
    registry_event_id: registryEventId,
  }),
  ContainerRepositoryTagDeleted: z.strictObject({ ...ofRepository, tag: z.string(), registry_event_id: registryEventId }),
  ContainerRepositoryCleanupScheduled: z.strictObject({
    ...ofRepository,
    name_regex_delete: z.string(),
    name_regex_keep: z.string().nullable(),
    keep_n: z.int().nullable(),
    older_than: z.string().nullable(),
    requested_at: z.iso.datetime(),
  }),
  ContainerRepositoryDeletionScheduled: z.strictObject(ofRepository),
  ContainerRepositoryDeleted: z.strictObject(ofRepository),
} satisfies EventSchemas;

export type ContainerRepositoryEvent = EventOf<typeof containerRepositoryEvents>;

export const containerRepositoryStreamId = (id: number) => `container_repository-${id}`;

export const containerRepositoryEventIndex = (event: ContainerRepositoryEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'ContainerRepository',
  targetId: event.data.id,
});

// ───────────────────────────── State ─────────────────────────────

export interface TagRecord {
  readonly digest: string;
  readonly revision: string | null;
  readonly totalSize: number | null;
  readonly createdAt: string;
}

export interface RepositoryRecord {
  readonly projectId: number;
  readonly name: string;
  readonly tags: ReadonlyMap<string, TagRecord>;
  /** When the last bulk tag deletion was requested (GitLab's hourly ExclusiveLease). */
  readonly cleanupRequestedAt: string | null;
  readonly deletionScheduled: boolean;
}

export interface ContainerRepositoryState {
  readonly id: number;
  /** null: never created, or deleted (`deleted` tells which). */
  readonly repository: RepositoryRecord | null;
  readonly deleted: boolean;
  /** Registry notifications already applied. */
  readonly seen: ReadonlySet<string>;
}

// ───────────────────────────── Commands ─────────────────────────────

export interface PushedTag {
  readonly tag: string;
  readonly digest: string;
  readonly revision: string | null;
  readonly totalSize: number | null;
  readonly createdAt: string;
}

export type ContainerRepositoryCommand =
  /** A registry push; creates the repository on its first push. */
  | ({ readonly type: 'PushTag'; readonly projectId: number; readonly name: string; readonly registryEventId: string | null } & PushedTag)
  /** A registry delete: of one tag, or of a manifest (every tag on its digest). */
  | { readonly type: 'DeleteFromRegistry'; readonly tag: string | null; readonly digest: string | null; readonly registryEventId: string | null }
  /** DELETE …/tags/:tag_name. */
  | { readonly type: 'DeleteTag'; readonly tag: string }
  /** DELETE …/tags: at most once an hour per repository, by `at` (the command clock). */
  | { readonly type: 'ScheduleCleanup'; readonly rules: CleanupRules; readonly at: string }
  /** The reactor's run of a scheduled cleanup, at `now`. */
  | { readonly type: 'CleanUpTags'; readonly rules: CleanupRules; readonly now: string }
  | { readonly type: 'ScheduleDeletion' }
  | { readonly type: 'DeleteRepository' };

// ───────────────────────────── Rules ─────────────────────────────

const CLEANUP_INTERVAL_MS = 60 * 60 * 1000;
/** GitLab's words when the lease `container_repository:cleanup_tags:<id>` is taken (render_api_error!, 400). */
export const CLEANUP_TOO_SOON = 'This request has already been made. You can run this at most once an hour for a given container repository';

// ───────────────────────────── Decider ─────────────────────────────

function evolveRepository(repository: RepositoryRecord, event: ContainerRepositoryEvent): RepositoryRecord {
  switch (event.type) {
    case 'ContainerRepositoryTagPushed': {
      const { tag, digest, revision, total_size, created_at } = event.data;
      const tags = new Map(repository.tags);
      tags.set(tag, { digest, revision, totalSize: total_size, createdAt: created_at });
      return { ...repository, tags };
    }
    case 'ContainerRepositoryTagDeleted': {
      const tags = new Map(repository.tags);
      tags.delete(event.data.tag);
      return { ...repository, tags };
    }
    case 'ContainerRepositoryCleanupScheduled':
      return { ...repository, cleanupRequestedAt: event.data.requested_at };
    case 'ContainerRepositoryDeletionScheduled':
      return { ...repository, deletionScheduled: true };
    default:
      return repository;
  }
}

function evolve(state: ContainerRepositoryState, event: ContainerRepositoryEvent): ContainerRepositoryState {
  switch (event.type) {
    case 'ContainerRepositoryCreated': {
      const { project_id, name } = event.data;
      return { ...state, repository: { projectId: project_id, name, tags: new Map(), cleanupRequestedAt: null, deletionScheduled: false } };
    }
    case 'ContainerRepositoryDeleted':
      return { ...state, repository: null, deleted: true };
    case 'ContainerRepositoryTagPushed':
    case 'ContainerRepositoryTagDeleted': {
      const id = event.data.registry_event_id;
      const seen = id === null ? state.seen : new Set([...state.seen, id]);
      return { ...state, seen, repository: state.repository && evolveRepository(state.repository, event) };
    }
    case 'ContainerRepositoryCleanupScheduled':
    case 'ContainerRepositoryDeletionScheduled':
      return { ...state, repository: state.repository && evolveRepository(state.repository, event) };
    default:
      return unhandled(event);
  }
}

type Decided = ContainerRepositoryEvent[];

function push(state: ContainerRepositoryState, command: Extract<ContainerRepositoryCommand, { type: 'PushTag' }>): Decided {
  const { id, repository } = state;
  // A push to a repository being deleted is refused; the caller gives the push a new repository.
  if (state.deleted) throw recordNotFound('Repository');
  const events: Decided = [];
  if (!repository) events.push({ type: 'ContainerRepositoryCreated', data: { id, project_id: command.projectId, name: command.name } });
  const current = repository?.tags.get(command.tag);
  // The same manifest under the same tag again (a retried push without an id) is no news.
  if (current && current.digest === command.digest) return events;
  const { tag, digest, revision, totalSize, createdAt, registryEventId } = command;
  events.push({
    type: 'ContainerRepositoryTagPushed',
    data: { id, project_id: command.projectId, tag, digest, revision, total_size: totalSize, created_at: createdAt, registry_event_id: registryEventId },
  });
  return events;
}

const tagDeleted = (state: ContainerRepositoryState, repository: RepositoryRecord, tag: string, registryEventId: string | null = null): ContainerRepositoryEvent => ({
  type: 'ContainerRepositoryTagDeleted',
  data: { id: state.id, project_id: repository.projectId, tag, registry_event_id: registryEventId },
});

function decide(command: ContainerRepositoryCommand, state: ContainerRepositoryState): Decided {
  const registryEventId = 'registryEventId' in command ? command.registryEventId : null;
  if (registryEventId !== null && state.seen.has(registryEventId)) return [];
  if (command.type === 'PushTag') return push(state, command);
  const { repository } = state;
  if (!repository) throw recordNotFound('Repository');
  const ref = { id: state.id, project_id: repository.projectId };
  switch (command.type) {
    case 'DeleteFromRegistry': {
      const names = command.tag !== null ? [command.tag] : [...repository.tags].filter(([, tag]) => tag.digest === command.digest).map(([name]) => name);
      return names.filter((name) => repository.tags.has(name)).map((name, i) => tagDeleted(state, repository, name, i === 0 ? registryEventId : null));
    }
    case 'DeleteTag':
      // GitLab's validate_tag!: a tag the registry does not have is "404 Tag Not Found".
      if (!repository.tags.has(command.tag)) throw notFound('Tag');
      return [tagDeleted(state, repository, command.tag)];
    case 'ScheduleCleanup': {
      const last = repository.cleanupRequestedAt;
      if (last !== null && Date.parse(command.at) - Date.parse(last) < CLEANUP_INTERVAL_MS) throw serviceError(CLEANUP_TOO_SOON);
      const { nameRegexDelete, nameRegexKeep, keepN, olderThan } = command.rules;
      return [
        {
          type: 'ContainerRepositoryCleanupScheduled',
          data: { ...ref, name_regex_delete: nameRegexDelete, name_regex_keep: nameRegexKeep, keep_n: keepN, older_than: olderThan, requested_at: command.at },
        },
      ];
    }
    case 'CleanUpTags': {
      const tags = [...repository.tags].map(([name, tag]) => ({ name, createdAt: tag.createdAt }));
      return tagsToDelete(tags, command.rules, new Date(command.now)).map((name) => tagDeleted(state, repository, name));
    }
    case 'ScheduleDeletion':
      // DeleteContainerRepositoryWorker is enqueued again by GitLab; one scheduled removal is enough here.
      return repository.deletionScheduled ? [] : [{ type: 'ContainerRepositoryDeletionScheduled', data: ref }];
    case 'DeleteRepository':
      return [{ type: 'ContainerRepositoryDeleted', data: ref }];
    default:
      return unhandled(command);
  }
}

export const containerRepositoryDecider: Decider<ContainerRepositoryCommand, ContainerRepositoryEvent, ContainerRepositoryState, number> = {
  initialState: (id) => ({ id, repository: null, deleted: false, seen: new Set() }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** `validates :name, uniqueness: { scope: :project_id }`: one repository per path. */
const pathClaim = (projectId: number, name: string) => ({ kind: 'container_repository_name', key: `${projectId}/${name}`, conflictMessage: 'Container repository has already been taken' });

export function containerRepositoryClaims(event: ContainerRepositoryEvent, before: ContainerRepositoryState): ClaimChanges {
  switch (event.type) {
    case 'ContainerRepositoryCreated':
      return { acquire: [pathClaim(event.data.project_id, event.data.name)], release: [] };
    case 'ContainerRepositoryDeleted':
      return before.repository ? { acquire: [], release: [pathClaim(event.data.project_id, before.repository.name)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}
