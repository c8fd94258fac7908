import type { IssueFacts } from './payloads-issues.js';
import type { MergeRequestFacts } from './payloads-merge-requests.js';
import type { LegacyDiffFacts, SnippetFacts } from './payloads-notes.js';
import type { Logged, OwnerFacts } from './payloads-system.js';
import type { CommitFacts, HookName, ProjectFacts, UserFacts } from './payloads.js';

/** What a trigger of the hook table (./triggers.ts) reads and makes. */

export interface HookMessage {
  readonly name: HookName;
  readonly projectId: number | null;
  /** The branch a push moved: what `push_events_branch_filter` is matched against. */
  readonly branch?: string;
  readonly payload: unknown;
}

/**
 * What the builders read, given by the reactor: the issuables (issue, merge request, snippet)
 * and the streams as they were at the triggering event (`before`: just before it); the other
 * rows — projects, users, labels, commits — as they are now.
 */
export interface HookFacts {
  /** The event's actor (GitLab's current_user), as now. */
  readonly actor: UserFacts | undefined;
  project(id: number): Promise<ProjectFacts | undefined>;
  /** The commits by SHA, in the order asked, with their changed files. */
  commits(projectId: number, shas: readonly string[]): Promise<CommitFacts[]>;
  /** LegacyDiffNote#set_diff: the file of a commit's diff (against its first parent) a line code names, or null. */
  legacyDiff(projectId: number, sha: string, lineCode: string): Promise<LegacyDiffFacts | null>;
  mergeRequest(id: number, before?: boolean): Promise<MergeRequestFacts | undefined>;
  issue(id: number, before?: boolean): Promise<IssueFacts | undefined>;
  /** A project's snippet. */
  snippet(id: number): Promise<SnippetFacts | undefined>;
  users(ids: readonly number[]): Promise<UserFacts[]>;
  /** A stream's events up to the triggering event, or before it (`before`). */
  history(streamId: string, before?: boolean): Promise<Logged[]>;
  /** Project#owner of a project in this namespace. */
  owner(namespaceId: number): Promise<OwnerFacts>;
  /** Whether the triggering event was committed with an event of this type on the same project. */
  committedWith(type: string, projectId: number): Promise<boolean>;
}
