import type { Db } from '../database/database.js';
import { VISIBILITY_LEVEL } from '../domain/access.js';
import type { HookFacts } from '../domain/hooks/triggers.js';
import type { IssueFacts } from '../domain/hooks/payloads-issues.js';
import type { LabelFacts, MergeRequestFacts } from '../domain/hooks/payloads-merge-requests.js';
import type { SnippetFacts } from '../domain/hooks/payloads-notes.js';
import { gitXmlschema, type CommitFacts, type ProjectFacts, type UserFacts } from '../domain/hooks/payloads.js';
import { avatarUrlOf } from '../domain/uploads.js';
import { readStream } from '../eventstore/store.js';
import { checkpointOf, compareCheckpoints, type StoredEvent } from '../eventstore/types.js';
import { findCommits, readFiles } from '../projections/repository/queries.js';
import { avatarUrl } from '../projections/users/avatar.js';
import type { CommandContext } from './kernel/context.js';

/**
 * The reads behind the webhook payload builders (src/domain/hooks/triggers.ts): rows as they
 * are now, each read at most once per event, and streams folded up to the triggering event in
 * the log's gap-free order.
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
  const here = checkpointOf(event);
  return {
    actor,
    project,
    users,
    commits: (projectId, shas) => commitFacts(db, projectId, shas),
    labels: (projectId, ids) => labelFacts(db, projectId, ids),
    mergeRequest: async (projectId, iid) => {
      const row = await db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
      const target = await project(projectId);
      if (!row || !target) return undefined;
      const [source, labels, assignees, last] = await Promise.all([project(row.source_project_id), labelFacts(db, projectId, row.label_ids), users(row.assignee_ids), commitFacts(db, row.source_project_id, [row.head_sha])]);
      const mr: MergeRequestFacts = {
        id: row.id,
        iid: row.iid,
        authorId: row.author_id,
        assigneeIds: row.assignee_ids,
        title: row.title,
        description: row.description,
        state: row.state,
        mergeStatus: row.merge_status,
        mergeCommitSha: row.merge_commit_sha,
        mergeUserId: row.merged_by_id,
        milestoneId: row.milestone_id,
        sourceBranch: row.source_branch,
        sourceProjectId: row.source_project_id,
        targetBranch: row.target_branch,
        targetProjectId: row.project_id,
        timeEstimate: row.time_estimate,
        totalTimeSpent: row.total_time_spent,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
        source: source ?? null,
        target,
        lastCommit: last[0] ?? null,
        labels,
        assignees,
      };
      return mr;
    },
    issue: async (id) => {
      const row = await db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
      const p = row ? await project(row.project_id) : undefined;
      if (!row || !p) return undefined;
      const [labels, assignees] = await Promise.all([labelFacts(db, row.project_id, row.label_ids), users(row.assignee_ids)]);
      const issue: IssueFacts = {
        id: row.id,
        iid: row.iid,
        projectId: row.project_id,
        authorId: row.author_id,
        assigneeIds: row.assignee_ids,
        closedAt: row.closed_at === null ? null : new Date(row.closed_at),
        confidential: row.confidential,
        description: row.description,
        discussionLocked: row.discussion_locked,
        dueDate: row.due_date,
        milestoneId: row.milestone_id,
        movedToId: row.moved_to_id,
        relativePosition: row.relative_position,
        state: row.state,
        timeEstimate: row.time_estimate,
        totalTimeSpent: row.total_time_spent,
        title: row.title,
        weight: row.weight,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
        project: p,
        labels,
        assignees,
      };
      return issue;
    },
    snippet: async (id) => {
      const row = await db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row || row.project_id === null) return undefined;
      const snippet: SnippetFacts = {
        id: row.id,
        title: row.title,
        content: row.content,
        authorId: row.author_id,
        projectId: row.project_id,
        fileName: row.file_name,
        visibilityLevel: VISIBILITY_LEVEL[row.visibility],
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      };
      return snippet;
    },
    history: async (streamId, before = false) =>
      (await readStream(db, streamId))
        .filter((e) => {
          const order = compareCheckpoints(checkpointOf(e), here);
          return before ? order < 0 : order <= 0;
        })
        .map((e) => ({ type: e.type, data: e.data as any, occurredAt: e.occurredAt })),
    owner: async (namespaceId) => {
      const ns = await db.selectFrom('namespaces').select(['kind', 'name', 'owner_id']).where('id', '=', namespaceId).executeTakeFirst();
      if (!ns) return { name: null, email: '' };
      if (ns.kind === 'group' || ns.owner_id === null) return { name: ns.name, email: '' };
      const owner = await db.selectFrom('users').select(['name', 'email']).where('id', '=', ns.owner_id).executeTakeFirst();
      return owner ? { name: owner.name, email: owner.email } : { name: ns.name, email: '' };
    },
  };
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
  return Promise.all(
    commits.map(async (c) => {
      const parent = c.parents[0] ? (await findCommits(db, projectId, [c.parents[0]]))[0] : undefined;
      const [before, after] = await Promise.all([parent ? readFiles(db, projectId, parent.tree) : new Map(), readFiles(db, projectId, c.tree)]);
      const added: string[] = [];
      const modified: string[] = [];
      const removed: string[] = [];
      for (const [path, entry] of after) {
        const old = before.get(path);
        if (!old) added.push(path);
        else if (old.sha !== entry.sha || old.mode !== entry.mode) modified.push(path);
      }
      for (const path of before.keys()) if (!after.has(path)) removed.push(path);
      const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
      return {
        id: c.sha,
        message: c.message,
        timestamp: gitXmlschema(c.committer.time, c.committer.tzOffset),
        authorName: c.author.name,
        authorEmail: c.author.email,
        added: added.sort(byPath),
        modified: modified.sort(byPath),
        removed: removed.sort(byPath),
      };
    }),
  );
}

async function labelFacts(db: Db, projectId: number, ids: readonly number[]): Promise<LabelFacts[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('labels').selectAll().where('id', 'in', [...ids]).orderBy('title').execute();
  return rows.map((l) => ({ id: l.id, title: l.title, color: l.color, projectId: l.project_id ?? projectId, createdAt: new Date(l.created_at), updatedAt: new Date(l.updated_at), description: l.description }));
}
