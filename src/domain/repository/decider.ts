import { z } from 'zod';
import { type Decider, unhandled } from '../decider.js';
import { conflict, notFound, serviceError, serviceNotFound } from '../errors.js';
import type { EventOf, EventSchemas, FeedIndex, Upcasters } from '../events.js';

/**
 * A project's repository: its refs (branches and tags) and the tags' releases. One
 * aggregate per ref, stream `repository-<project id>:<ref>` (RefKey). The objects the refs
 * point to are git objects in the object store (src/domain/repository/objects.ts), written in
 * the same transaction as the event that first references them; an event is a ref move
 * carrying the old and new SHA.
 *
 * The repository is the one source of truth of which branches exist; the project keeps its
 * `default_branch` (HEAD), which must name one of them when it changes.
 */

const sha = z.string().regex(/^[0-9a-f]{40}$/);
const ofBranch = { project_id: z.int(), branch: z.string() };
const ofTag = { project_id: z.int(), tag: z.string() };

/**
 * What the push activity and the chat message show of a commit the move brought (GitLab's
 * push data `commits[]`: `message`, `author.name`), so that both stay pure functions of the
 * event: its whole message and its author's name as the commit object records them.
 * `author_id` (schema version 4 of the branch events, 2 of TagCreated): the user whose email
 * was the commit's author email when the event was written (ProcessCommitWorker's
 * `commit.author`, User.find_by_any_email at push time; case-insensitive, forgelog has no
 * secondary emails), null for none; absent on older events, which did not record it: their
 * readers resolve the email against the users as they are when read. Internal: no API answer
 * shows it.
 */
const commitDetail = z.strictObject({ message: z.string(), author_name: z.string(), author_id: z.int().nullable().optional() });
export type CommitDetail = z.infer<typeof commitDetail>;
/** A commit detail as a command writes it: `author_id` always resolved (src/commands/repository.ts, `withCommitDetails`). */
export type RecordedCommitDetail = Required<CommitDetail>;

/**
 * `commit_details`: one per entry of `commits`, in the same order (newest first); null on
 * events written before schema version 2, which did not record them.
 */
const details = { commit_details: z.array(commitDetail).nullable() };

/**
 * GitLab's push data lists the newest 20 commits a push brought (Gitlab::DataBuilder::Push,
 * `commits.last(20)`) and counts them all (`total_commits_count`): a push of thousands of
 * commits keeps its event small. `commits` (and `commit_details`) hold at most this many.
 */
export const PUSH_COMMITS_LIMIT = 20;

/** `commit_count`: every commit the move brought, of which `commits` lists the newest (schema version 3). */
const counted = { commit_count: z.int().nonnegative() };

export const repositoryEvents = {
  /** A branch pointing at `new_sha`; `commits`: the commits it brought that no branch had (newest first). */
  BranchCreated: z.strictObject({ ...ofBranch, new_sha: sha, commits: z.array(sha), ...details, ...counted }),
  /** A push moving a branch from `old_sha` to `new_sha`. */
  BranchUpdated: z.strictObject({ ...ofBranch, old_sha: sha, new_sha: sha, commits: z.array(sha), ...details, ...counted }),
  BranchDeleted: z.strictObject({ ...ofBranch, old_sha: sha }),
  /**
   * A tag at `target`: an annotated tag's object (its `message` then the tag object's) or,
   * lightweight, the commit itself (`message` null); `commit_sha`, the commit it names.
   * `commit_details`: that commit's, which the tag push activity shows (GitLab's tag push
   * data carries the one commit). `release_description`: the release the tags API created
   * with it (null: none).
   */
  TagCreated: z.strictObject({
    ...ofTag,
    target: sha,
    commit_sha: sha,
    message: z.string().nullable(),
    commit_details: z.array(commitDetail),
    release_description: z.string().nullable(),
  }),
  /** The tag is gone, and its release with it (Tags::DestroyService destroys the release). */
  TagDeleted: z.strictObject({ ...ofTag, old_sha: sha }),
  /** The release notes of a tag (GitLab 12's legacy tag release, Releases::Create/UpdateService), created or replaced. */
  TagReleaseSaved: z.strictObject({ ...ofTag, description: z.string() }),
} satisfies EventSchemas;

export type RepositoryEvent = EventOf<typeof repositoryEvents>;

/**
 * Schema version 2 of BranchCreated and BranchUpdated added `commit_details` (version 1 did
 * not record them); version 3 `commit_count` (before it, `commits` listed every commit);
 * version 4 each detail's `author_id`, as version 2 of TagCreated did. An event from before
 * that is left as it is: its details without `author_id` say it was not recorded.
 */
const countCommits = (data: { commits: readonly string[] }) => ({ ...data, commit_count: data.commits.length });
const authorsNotRecorded = (data: object) => data;
export const repositoryUpcasters: Upcasters<typeof repositoryEvents> = {
  BranchCreated: { 1: (data: object) => ({ ...data, commit_details: null }), 2: countCommits, 3: authorsNotRecorded },
  BranchUpdated: { 1: (data: object) => ({ ...data, commit_details: null }), 2: countCommits, 3: authorsNotRecorded },
  TagCreated: { 1: authorsNotRecorded },
};

/**
 * A ref of a project: `refs/heads/<branch>` or `refs/tags/<tag>`. Each ref is a stream of its
 * own, `repository-<project id>:<ref>`, so writes to different refs never contend; several
 * refs written together (a merge and its source branch's deletion, a push) are one
 * transaction over their streams.
 */
export interface RefKey {
  readonly projectId: number;
  readonly ref: string;
}

export const branchRef = (branch: string) => `refs/heads/${branch}`;
export const tagRef = (tag: string) => `refs/tags/${tag}`;

export const refStreamId = (key: RefKey) => `repository-${key.projectId}:${key.ref}`;

/** The project's one stream of every ref, before each ref had its own: the refs' predecessor, never appended to again. */
export const repositoryStreamId = (key: RefKey) => `repository-${key.projectId}`;

/** The ref an event writes. */
export const refOfEvent = (event: RepositoryEvent): string => ('branch' in event.data ? branchRef(event.data.branch) : tagRef(event.data.tag));

export const repositoryEventIndex = (event: RepositoryEvent): FeedIndex => ({ projectId: event.data.project_id, targetType: null, targetId: null });

// ───────────────────────────── State ─────────────────────────────

export interface RefState {
  readonly projectId: number;
  readonly ref: string;
  /** A branch's head commit, a tag's target (a tag object's SHA or a commit's); null while the ref does not exist. */
  readonly target: string | null;
  /** A tag's release notes exist. */
  readonly release: boolean;
}

// ───────────────────────────── Commands ─────────────────────────────

/**
 * The details of the commits a move lists (`commits`; a tag's, its commit): one per commit,
 * same order. The command layer adds them from the stored commits, where it runs the ref
 * writes (src/commands/repository.ts, `withCommitDetails`); the writers decide the moves
 * without them (RepositoryWrite).
 */
export interface CommitDetails {
  readonly commitDetails: readonly RecordedCommitDetail[];
}

export type RepositoryCommand<Details extends object = CommitDetails> =
  /**
   * A new branch at `sha` (a new commit on an empty repository, or an existing commit);
   * `commits`: the commits it brought that no branch had, newest first. `commitCount`: the
   * commits it brought when `commits` lists only the newest of them (a push; default: its length).
   */
  | ({
      readonly type: 'CreateBranch';
      readonly branch: string;
      readonly sha: string;
      readonly commits: readonly string[];
      readonly commitCount?: number;
    } & Details)
  /** A push of new commits: `oldSha` is the head the commits were built on. */
  | ({
      readonly type: 'PushBranch';
      readonly branch: string;
      readonly oldSha: string;
      readonly newSha: string;
      readonly commits: readonly string[];
      readonly commitCount?: number;
    } & Details)
  | { readonly type: 'DeleteBranch'; readonly branch: string }
  /** A tag at `target` (written by the caller's transaction when annotated), naming `commitSha`. */
  | ({
      readonly type: 'CreateTag';
      readonly tag: string;
      readonly target: string;
      readonly commitSha: string;
      readonly message: string | null;
      readonly releaseDescription: string | null;
    } & Details)
  | { readonly type: 'DeleteTag'; readonly tag: string }
  /** `create`: POST …/release (the release must not exist yet); else PUT (it must). */
  | { readonly type: 'SaveTagRelease'; readonly tag: string; readonly description: string; readonly create: boolean }
  /**
   * Ref writes decided in order, all or none (an accepted merge request: its target's move, its
   * source's deletion; a push). Across refs it is a command per ref's stream in one transaction
   * (src/commands/repository.ts, `refSpecs`); on one ref's stream, its writes in order (a tag
   * deleted and made again).
   */
  | { readonly type: 'UpdateRefs'; readonly commands: readonly RefCommand<Details>[] };

/** A repository command as its writers decide it: the moves without their commits' details. */
export type RepositoryWrite = RepositoryCommand<object>;

/** The ref a command writes (UpdateRefs: none of its own). */
export const refOfCommand = (command: RefWrite | Extract<RepositoryWrite, { type: 'SaveTagRelease' }>): string =>
  'branch' in command ? branchRef(command.branch) : tagRef(command.tag);

/** One ref write: what `UpdateRefs` is made of. */
export type RefCommand<Details extends object = CommitDetails> = Exclude<RepositoryCommand<Details>, { type: 'UpdateRefs' | 'SaveTagRelease' }>;
export type RefWrite = RefCommand<object>;

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: RefState, event: RepositoryEvent): RefState {
  // The project's stream before refs had their own (the predecessor) holds every ref's events.
  if (refOfEvent(event) !== state.ref) return state;
  switch (event.type) {
    case 'BranchCreated':
    case 'BranchUpdated':
      return { ...state, target: event.data.new_sha };
    case 'TagCreated':
      return { ...state, target: event.data.target, release: event.data.release_description !== null };
    case 'BranchDeleted':
    case 'TagDeleted':
      return { ...state, target: null, release: false };
    case 'TagReleaseSaved':
      return { ...state, release: true };
    default:
      return unhandled(event);
  }
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
function detailsOf(command: { readonly commits: readonly string[] } & CommitDetails): RecordedCommitDetail[] {
  if (command.commitDetails.length !== command.commits.length) throw new Error('commitDetails must give one detail per commit');
  return command.commitDetails.map(({ message, author_name, author_id }) => ({ message, author_name, author_id }));
}

/** The newest commits a move lists (at most PUSH_COMMITS_LIMIT), their details, and how many it brought. */
function movedCommits(command: { readonly commits: readonly string[]; readonly commitCount?: number } & CommitDetails) {
  const details = detailsOf(command);
  const count = command.commitCount ?? command.commits.length;
  if (count < command.commits.length) throw new Error('commitCount must count every commit listed');
  return { commits: command.commits.slice(0, PUSH_COMMITS_LIMIT), commit_details: details.slice(0, PUSH_COMMITS_LIMIT), commit_count: count };
}

function decide(command: RepositoryCommand, state: RefState): RepositoryEvent[] {
  const project_id = state.projectId;
  if (command.type === 'UpdateRefs') {
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
  if (refOfCommand(command) !== state.ref) throw new Error(`a command on ${refOfCommand(command)} sent to the stream of ${state.ref}`);
  const target = state.target;
  switch (command.type) {
    case 'CreateBranch':
      // GitLab's Branches::CreateService / Gitlab::Git::Repository#add_branch.
      if (!validBranchName(command.branch)) throw serviceError('Branch name is invalid');
      if (target !== null) throw serviceError('Branch already exists');
      return [{ type: 'BranchCreated', data: { project_id, branch: command.branch, new_sha: command.sha, ...movedCommits(command) } }];
    case 'PushBranch':
      // The commits were built on a head another push has moved since (Gitlab::Git::CommitError).
      if (target !== command.oldSha) throw conflict('Could not update the branch: it was changed meanwhile');
      if (command.newSha === command.oldSha) return [];
      return [
        {
          type: 'BranchUpdated',
          data: { project_id, branch: command.branch, old_sha: command.oldSha, new_sha: command.newSha, ...movedCommits(command) },
        },
      ];
    case 'DeleteBranch':
      if (target === null) throw serviceError('No such branch');
      return [{ type: 'BranchDeleted', data: { project_id, branch: command.branch, old_sha: target } }];
    case 'CreateTag':
      // Tags::CreateService: Gitlab::GitRefValidator, then Gitaly's TagExistsError.
      if (!validBranchName(command.tag)) throw serviceError('Tag name invalid');
      if (target !== null) throw serviceError(`Tag ${command.tag} already exists`);
      return [
        {
          type: 'TagCreated',
          data: {
            project_id,
            tag: command.tag,
            target: command.target,
            commit_sha: command.commitSha,
            message: command.message,
            commit_details: detailsOf({ commits: [command.commitSha], commitDetails: command.commitDetails }),
            release_description: command.releaseDescription,
          },
        },
      ];
    case 'DeleteTag':
      // Tags::DestroyService: error('No such tag', 404).
      if (target === null) throw serviceNotFound('No such tag');
      return [{ type: 'TagDeleted', data: { project_id, tag: command.tag, old_sha: target } }];
    case 'SaveTagRelease':
      if (target === null) throw notFound('Tag');
      // Releases::CreateService: 409 'Release already exists'; Releases::UpdateService: 404 'Release does not exist'.
      if (command.create && state.release) throw conflict('Release already exists');
      if (!command.create && !state.release) throw serviceNotFound('Release does not exist');
      return [{ type: 'TagReleaseSaved', data: { project_id, tag: command.tag, description: command.description } }];
    default:
      return unhandled(command);
  }
}

export const repositoryDecider: Decider<RepositoryCommand, RepositoryEvent, RefState, RefKey> = {
  initialState: ({ projectId, ref }) => ({ projectId, ref, target: null, release: false }),
  evolve,
  decide,
};
