import { z } from 'zod';
import { type Decider, unhandled } from '../decider.js';
import { conflict, serviceError } from '../errors.js';
import type { EventOf, EventSchemas, FeedIndex, Upcasters } from '../events.js';

/**
 * A project's repository: its refs. One aggregate per project, stream `repository-<project
 * id>`. The objects the refs point to are git objects in the object store
 * (src/domain/repository/objects.ts), written in the same transaction as the event that
 * first references them; an event is a ref move carrying the old and new SHA.
 *
 * The repository is the one source of truth of which branches exist; the project keeps its
 * `default_branch` (HEAD), which must name one of them when it changes.
 */

const sha = z.string().regex(/^[0-9a-f]{40}$/);
const ofBranch = { project_id: z.int(), branch: z.string() };

/**
 * What the push activity and the chat message show of a commit the move brought (GitLab's
 * push data `commits[]`: `message`, `author.name`), so that both stay pure functions of the
 * event: its whole message and its author's name as the commit object records them.
 */
const commitDetail = z.strictObject({ message: z.string(), author_name: z.string() });
export type CommitDetail = z.infer<typeof commitDetail>;

/**
 * `commit_details`: one per entry of `commits`, in the same order (newest first); null on
 * events written before schema version 2, which did not record them.
 */
const details = { commit_details: z.array(commitDetail).nullable() };

export const repositoryEvents = {
  /** A branch pointing at `new_sha`; `commits`: the commits it brought that no branch had (newest first). */
  BranchCreated: z.strictObject({ ...ofBranch, new_sha: sha, commits: z.array(sha), ...details }),
  /** A push moving a branch from `old_sha` to `new_sha`. */
  BranchUpdated: z.strictObject({ ...ofBranch, old_sha: sha, new_sha: sha, commits: z.array(sha), ...details }),
  BranchDeleted: z.strictObject({ ...ofBranch, old_sha: sha }),
} satisfies EventSchemas;

export type RepositoryEvent = EventOf<typeof repositoryEvents>;

/** Schema version 2 of BranchCreated and BranchUpdated added `commit_details`; version 1 did not record them. */
export const repositoryUpcasters: Upcasters<typeof repositoryEvents> = {
  BranchCreated: { 1: (data: object) => ({ ...data, commit_details: null }) },
  BranchUpdated: { 1: (data: object) => ({ ...data, commit_details: null }) },
};

export const repositoryStreamId = (projectId: number) => `repository-${projectId}`;

export const repositoryEventIndex = (event: RepositoryEvent): FeedIndex => ({ projectId: event.data.project_id, targetType: null, targetId: null });

// ───────────────────────────── State ─────────────────────────────

export interface RepositoryState {
  readonly projectId: number;
  /** Branch name → head commit SHA. */
  readonly branches: ReadonlyMap<string, string>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type RepositoryCommand =
  /**
   * A new branch at `sha` (a new commit on an empty repository, or an existing commit);
   * `commitDetails`: one per entry of `commits`, same order.
   */
  | { readonly type: 'CreateBranch'; readonly branch: string; readonly sha: string; readonly commits: readonly string[]; readonly commitDetails: readonly CommitDetail[] }
  /** A push of new commits: `oldSha` is the head the commits were built on. */
  | {
      readonly type: 'PushBranch';
      readonly branch: string;
      readonly oldSha: string;
      readonly newSha: string;
      readonly commits: readonly string[];
      readonly commitDetails: readonly CommitDetail[];
    }
  | { readonly type: 'DeleteBranch'; readonly branch: string }
  /** Ref moves decided in order on one stream, all or none (an accepted merge request: its target's move, its source's deletion). */
  | { readonly type: 'UpdateBranches'; readonly commands: readonly Exclude<RepositoryCommand, { type: 'UpdateBranches' }>[] };

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: RepositoryState, event: RepositoryEvent): RepositoryState {
  const branches = new Map(state.branches);
  switch (event.type) {
    case 'BranchCreated':
    case 'BranchUpdated':
      branches.set(event.data.branch, event.data.new_sha);
      break;
    case 'BranchDeleted':
      branches.delete(event.data.branch);
      break;
    default:
      return unhandled(event);
  }
  return { ...state, branches };
}

/** NAME_MAX: git keeps a loose ref as a file under refs/, so no component of a ref's name may pass 255 bytes. */
export const REF_COMPONENT_MAX_BYTES = 255;
/** A whole ref name, in bytes: inside PATH_MAX with the repository's path, and inside PostgreSQL's btree entry (2,704 bytes). */
export const REF_NAME_MAX_BYTES = 1024;

const utf8 = new TextEncoder();

/** A ref name (or a pattern of them) no longer than git can keep: each component at most 255 bytes, the whole at most 1,024. */
export function refNameFits(name: string): boolean {
  // A UTF-16 code unit is at least one byte and at most three: most names are decided by their length.
  if (name.length > REF_NAME_MAX_BYTES) return false;
  if (name.length * 3 <= REF_COMPONENT_MAX_BYTES) return true;
  if (utf8.encode(name).length > REF_NAME_MAX_BYTES) return false;
  return name.split('/').every((part) => part.length * 3 <= REF_COMPONENT_MAX_BYTES || utf8.encode(part).length <= REF_COMPONENT_MAX_BYTES);
}

/**
 * Gitlab::GitRefValidator: not a full ref (refs/heads/, refs/remotes/), and a valid name
 * under refs/heads/ by git's check-ref-format rules, no longer than git can keep (refNameFits).
 */
export function validBranchName(name: string): boolean {
  if (!refNameFits(name)) return false;
  if (name.startsWith('refs/heads/') || name.startsWith('refs/remotes/') || name.startsWith('-')) return false;
  if (name === '' || name === '@' || name.endsWith('/') || name.endsWith('.') || name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  return name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}

/** The commands' details, checked against their commits (a programming error otherwise). */
function detailsOf(command: { readonly commits: readonly string[]; readonly commitDetails: readonly CommitDetail[] }): CommitDetail[] {
  if (command.commitDetails.length !== command.commits.length) throw new Error('commitDetails must give one detail per commit');
  return command.commitDetails.map(({ message, author_name }) => ({ message, author_name }));
}

function decide(command: RepositoryCommand, state: RepositoryState): RepositoryEvent[] {
  const project_id = state.projectId;
  if (command.type === 'UpdateBranches') {
    const events: RepositoryEvent[] = [];
    let folded = state;
    for (const one of command.commands) {
      for (const event of decide(one, folded)) {
        events.push(event);
        folded = evolve(folded, event);
      }
    }
    return events;
  }
  const head = state.branches.get(command.branch);
  switch (command.type) {
    case 'CreateBranch':
      // GitLab's Branches::CreateService / Gitlab::Git::Repository#add_branch.
      if (!validBranchName(command.branch)) throw serviceError('Branch name is invalid');
      if (head !== undefined) throw serviceError('Branch already exists');
      return [{ type: 'BranchCreated', data: { project_id, branch: command.branch, new_sha: command.sha, commits: [...command.commits], commit_details: detailsOf(command) } }];
    case 'PushBranch':
      // The commits were built on a head another push has moved since (Gitlab::Git::CommitError).
      if (head !== command.oldSha) throw conflict('Could not update the branch: it was changed meanwhile');
      if (command.newSha === command.oldSha) return [];
      return [
        {
          type: 'BranchUpdated',
          data: { project_id, branch: command.branch, old_sha: command.oldSha, new_sha: command.newSha, commits: [...command.commits], commit_details: detailsOf(command) },
        },
      ];
    case 'DeleteBranch':
      if (head === undefined) throw serviceError('No such branch');
      return [{ type: 'BranchDeleted', data: { project_id, branch: command.branch, old_sha: head } }];
    default:
      return unhandled(command);
  }
}

export const repositoryDecider: Decider<RepositoryCommand, RepositoryEvent, RepositoryState, number> = {
  initialState: (projectId) => ({ projectId, branches: new Map() }),
  evolve,
  decide,
};
