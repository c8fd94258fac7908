import { createHash } from 'node:crypto';
import type { Db } from '../database/database.js';
import { VISIBILITY_LEVEL } from '../domain/access.js';
import { issueAsOf, mergeRequestAsOf, snippetAsOf } from '../domain/hooks/issuables.js';
import type { HookFacts } from '../domain/hooks/triggers.js';
import type { LabelFacts } from '../domain/hooks/payloads-issuables.js';
import type { IssueFacts } from '../domain/hooks/payloads-issues.js';
import type { MergeRequestFacts } from '../domain/hooks/payloads-merge-requests.js';
import type { LegacyDiffFacts, SnippetFacts } from '../domain/hooks/payloads-notes.js';
import { pruneTooLarge } from '../domain/repository/diffs.js';
import { gitXmlschema, type CommitFacts, type ProjectFacts, type UserFacts } from '../domain/hooks/payloads.js';
import type { Logged } from '../domain/hooks/payloads-system.js';
import { issueStreamId } from '../domain/issues/events.js';
import { mergeRequestStreamId } from '../domain/merge-requests/events.js';
import { snippetStreamId } from '../domain/snippets.js';
import { avatarUrlOf } from '../domain/uploads.js';
import { readStream } from '../eventstore/store.js';
import { checkpointOf, compareCheckpoints, type StoredEvent } from '../eventstore/types.js';
import { changedFiles, diffCommits, findCommits } from '../projections/repository/queries.js';
import { avatarUrl } from '../projections/users/avatar.js';
import type { CommandContext } from './kernel/context.js';

/**
 * The reads behind the webhook payload builders (src/domain/hooks/triggers.ts). GitLab builds
 * hook data at the moment of the change, so what has a stream of its own is read as of the
 * triggering event: the issuables (their streams folded up to the event's checkpoint in the
 * log's gap-free order, src/domain/hooks/issuables.ts) and the system hooks' subjects. What
 * the log does not give by itself is read as it is now: the project (its URLs, namespace name,
 * default branch), users (names, avatars), labels (titles, colours — an issuable's label and
 * assignee ids are as of the event) and commits (immutable). Each stream and row is read at
 * most once per event.
 */
export async function hookFacts(ctx: CommandContext, event: StoredEvent): Promise<HookFacts> {
  const { db } = ctx;
  const base = ctx.externalUrl?.() ?? '';
  const host = (() => {
    try {
      return new URL(base).hostname;
    } catch {
      return 'localhost';
    }
  })();
  const users = (ids: readonly number[]) => usersByIds(db, ids, base);
  const actor = typeof event.actorId === 'number' ? (await users([event.actorId]))[0] : undefined;
  const projects = new Map<number, Promise<ProjectFacts | undefined>>();
  const project = (id: number) => {
    if (!projects.has(id)) projects.set(id, projectFacts(db, id, base, host));
    return projects.get(id)!;
  };
  const streams = new Map<string, Promise<StoredEvent[]>>();
  const history = async (streamId: string, before = false): Promise<Logged[]> => {
    if (!streams.has(streamId)) streams.set(streamId, readStream(db, streamId));
    return upTo(await streams.get(streamId)!, event, before);
  };
  return {
    actor,
    project,
    users,
    commits: (projectId, shas) => commitFacts(db, projectId, shas),
    legacyDiff: (projectId, sha, lineCode) => legacyDiffFacts(db, projectId, sha, lineCode),
    history,
    committedWith: async (type, projectId) =>
      (await db
        .selectFrom('events')
        .select('global_position')
        .where('transaction_id', '=', event.transactionId)
        .where('event_type', '=', type)
        .where('project_id', '=', projectId)
        .executeTakeFirst()) !== undefined,
    mergeRequest: async (id, before = false) => {
      const asOf = mergeRequestAsOf(id, await history(mergeRequestStreamId(id), before));
      if (!asOf) return undefined;
      const m = asOf.mergeRequest;
      const target = await project(m.projectId);
      if (!target) return undefined;
      const head = m.latestVersion.head_commit_sha;
      const [source, labels, assignees, last] = await Promise.all([project(asOf.sourceProjectId), labelFacts(db, m.projectId, m.labelIds), users(m.assigneeIds), commitFacts(db, asOf.sourceProjectId, [head])]);
      const mr: MergeRequestFacts = {
        id,
        iid: m.iid,
        authorId: m.authorId,
        assigneeIds: m.assigneeIds,
        title: m.title,
        description: m.description,
        state: m.state,
        mergeStatus: m.mergeStatus,
        mergeCommitSha: asOf.mergeCommitSha,
        mergeUserId: asOf.mergeUserId,
        milestoneId: m.milestoneId,
        sourceBranch: m.sourceBranch,
        sourceProjectId: asOf.sourceProjectId,
        targetBranch: m.targetBranch,
        targetProjectId: m.projectId,
        timeEstimate: m.timeEstimate,
        totalTimeSpent: m.totalTimeSpent,
        createdAt: asOf.createdAt,
        updatedAt: asOf.updatedAt,
        source: source ?? null,
        target,
        lastCommit: last[0] ?? null,
        labels,
        assignees,
      };
      return mr;
    },
    issue: async (id, before = false) => {
      const asOf = issueAsOf(id, await history(issueStreamId(id), before));
      if (!asOf) return undefined;
      const i = asOf.issue;
      const p = await project(i.projectId);
      if (!p) return undefined;
      const [labels, assignees] = await Promise.all([labelFacts(db, i.projectId, i.labelIds), users(i.assigneeIds)]);
      const issue: IssueFacts = {
        id,
        iid: i.iid,
        projectId: i.projectId,
        authorId: i.authorId,
        assigneeIds: i.assigneeIds,
        closedAt: asOf.closedAt,
        confidential: i.confidential,
        description: i.description,
        discussionLocked: asOf.discussionLocked,
        dueDate: i.dueDate,
        milestoneId: i.milestoneId,
        movedToId: i.movedToId,
        // No event sets it: the projection keeps null too.
        relativePosition: null,
        state: i.state,
        timeEstimate: i.timeEstimate,
        totalTimeSpent: i.totalTimeSpent,
        title: i.title,
        weight: i.weight,
        createdAt: asOf.createdAt,
        updatedAt: asOf.updatedAt,
        project: p,
        labels,
        assignees,
      };
      return issue;
    },
    snippet: async (id) => {
      const asOf = snippetAsOf(id, await history(snippetStreamId(id)));
      if (!asOf || asOf.snippet.projectId === null) return undefined;
      const s = asOf.snippet;
      const snippet: SnippetFacts = {
        id,
        title: s.title,
        content: s.content,
        authorId: s.authorId,
        projectId: s.projectId!,
        fileName: s.fileName,
        visibilityLevel: VISIBILITY_LEVEL[s.visibility],
        createdAt: asOf.createdAt,
        updatedAt: asOf.updatedAt,
      };
      return snippet;
    },
    owner: async (namespaceId) => {
      const ns = await db.selectFrom('namespaces').select(['kind', 'name', 'owner_id']).where('id', '=', namespaceId).executeTakeFirst();
      if (!ns) return { name: null, email: '' };
      if (ns.kind === 'group' || ns.owner_id === null) return { name: ns.name, email: '' };
      const owner = await db.selectFrom('users').select(['name', 'email']).where('id', '=', ns.owner_id).executeTakeFirst();
      return owner ? { name: owner.name, email: owner.email } : { name: ns.name, email: '' };
    },
  };
}

/** A stream's events up to `event` (or before it, `before`) in the log's gap-free order: what that stream had said when the event was written. */
function upTo(stream: readonly StoredEvent[], event: StoredEvent, before: boolean): Logged[] {
  const here = checkpointOf(event);
  return stream
    .filter((e) => {
      const order = compareCheckpoints(checkpointOf(e), here);
      return before ? order < 0 : order <= 0;
    })
    .map((e) => ({ type: e.type, data: e.data as any, occurredAt: e.occurredAt }));
}

/** Whether an issue was confidential when `event` was written (false when it did not exist then). */
export async function issueConfidentialAt(db: Db, issueId: number, event: StoredEvent): Promise<boolean> {
  return issueAsOf(issueId, upTo(await readStream(db, issueStreamId(issueId)), event, false))?.issue.confidential ?? false;
}

async function usersByIds(db: Db, ids: readonly number[], base: string): Promise<UserFacts[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('users').select(['id', 'name', 'username', 'email', 'avatar_url']).where('id', 'in', [...ids]).execute();
  const byId = new Map(rows.map((u) => [u.id, { id: u.id, name: u.name, username: u.username, email: u.email, avatarUrl: avatarUrl(u, base) }]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

async function projectFacts(db: Db, id: number, base: string, host: string): Promise<ProjectFacts | undefined> {
  const row = await db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['projects.id', 'projects.name', 'projects.path', 'projects.description', 'projects.avatar_url', 'projects.visibility', 'projects.path_with_namespace', 'projects.default_branch', 'projects.settings', 'namespaces.name as namespace_name'])
    .where('projects.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const webUrl = `${base}/${row.path_with_namespace}`;
  return {
    instanceUrl: base,
    id: row.id,
    name: row.name,
    path: row.path,
    description: row.description,
    webUrl,
    avatarUrl: avatarUrlOf(base, row.avatar_url),
    sshUrl: `git@${host}:${row.path_with_namespace}.git`,
    httpUrl: `${webUrl}.git`,
    namespaceName: row.namespace_name,
    visibility: row.visibility,
    visibilityLevel: VISIBILITY_LEVEL[row.visibility],
    pathWithNamespace: row.path_with_namespace,
    defaultBranch: row.default_branch,
    ciConfigPath: (row.settings as { ci_config_path?: string | null }).ci_config_path ?? null,
  };
}

/** Commit#hook_attrs' facts: the commit, and the paths it added, changed and removed against its first parent (raw_deltas, no renames). */
async function commitFacts(db: Db, projectId: number, shas: readonly string[]): Promise<CommitFacts[]> {
  const commits = await findCommits(db, projectId, shas);
  const parents = new Map((await findCommits(db, projectId, commits.flatMap((c) => c.parents.slice(0, 1)))).map((p) => [p.sha, p.tree]));
  return Promise.all(
    commits.map(async (c) => {
      const { added, modified, removed } = await changedPaths(db, projectId, (c.parents[0] && parents.get(c.parents[0])) ?? null, c.tree);
      return {
        id: c.sha,
        message: c.message,
        timestamp: gitXmlschema(c.committer.time, c.committer.tzOffset),
        authorName: c.author.name,
        authorEmail: c.author.email,
        added,
        modified,
        removed,
      };
    }),
  );
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Commit#hook_attrs' added, modified and removed paths: the files that differ from the first parent's tree (raw_deltas, no renames). */
async function changedPaths(db: Db, projectId: number, from: string | null, to: string) {
  const { before, after } = await changedFiles(db, projectId, from, to);
  const added = [...after.keys()].filter((path) => !before.has(path));
  const modified = [...after.keys()].filter((path) => before.has(path));
  const removed = [...before.keys()].filter((path) => !after.has(path));
  return { added: added.sort(byPath), modified: modified.sort(byPath), removed: removed.sort(byPath) };
}

async function labelFacts(db: Db, projectId: number, ids: readonly number[]): Promise<LabelFacts[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('labels').selectAll().where('id', 'in', [...ids]).orderBy('title').execute();
  return rows.map((l) => ({ id: l.id, title: l.title, color: l.color, projectId: l.project_id ?? projectId, createdAt: new Date(l.created_at), updatedAt: new Date(l.updated_at), description: l.description }));
}

/**
 * LegacyDiffNote#set_diff (#find_diff over Commit#raw_diffs): the first file of the commit's
 * diff against its first parent whose new path's SHA-1 starts the line code, a patch past the
 * size limit emptied and `too_large`. A commit never changes, so this is what GitLab stored
 * when the note was created; no history is walked.
 */
async function legacyDiffFacts(db: Db, projectId: number, sha: string, lineCode: string): Promise<LegacyDiffFacts | null> {
  const [commit] = await findCommits(db, projectId, [sha]);
  if (!commit) return null;
  const fileHash = lineCode.slice(0, lineCode.indexOf('_'));
  const entries = await diffCommits(db, projectId, commit.parents[0] ?? null, commit.sha);
  const index = entries.findIndex((e) => createHash('sha1').update(e.new_path).digest('hex') === fileHash);
  if (index === -1) return null;
  const raw = entries[index]!;
  const [entry] = pruneTooLarge([raw]);
  const e = entry ?? raw;
  return {
    diff: e.diff,
    new_path: e.new_path,
    old_path: e.old_path,
    a_mode: e.a_mode,
    b_mode: e.b_mode,
    new_file: e.new_file,
    renamed_file: e.renamed_file,
    deleted_file: e.deleted_file,
    too_large: e.diff === '' && raw.diff !== '',
  };
}
