import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { closingIssueReferences } from '../domain/issues/references.js';
import { issues } from '../domain/issues/aggregate.js';
import { issueStreamId } from '../domain/issues/events.js';
import { can } from '../domain/policy/can.js';
import type { RepositoryEvent } from '../domain/repository/decider.js';
import type { StoredEvent } from '../eventstore/types.js';
import { projectSubjectsOf } from '../projections/access.js';
import { canOnIssue, referencedIssues } from '../projections/issues/queries.js';
import { commitsBetween } from '../projections/repository/history.js';
import { findCommits } from '../projections/repository/queries.js';
import { causedBy } from './kernel/causation.js';
import type { CommandContext, Writer } from './kernel/context.js';
import { run } from './kernel/run.js';
import { usersByEmail } from '../projections/users/queries.js';

/**
 * Closing issues from pushed commits (GitLab 12's Git::BranchHooksService#enqueue_process_commit_messages
 * → ProcessCommitWorker): a branch move of the project's default branch — `git push`, the
 * commits and files APIs, a cherry-pick, a merge — closes the open issues each new commit's
 * message closes (`Closes #1`, `Fixes group/project#2`: ClosingIssueExtractor, as the pusher
 * sees them), each one the pusher may update, closed by the commit's author (the user whose
 * email is the commit's author email, else the pusher) with "closed via commit <sha>". See
 * docs/issues.md, "Closing issues from commits".
 */

/** Git::BaseHooksService::PROCESS_COMMIT_LIMIT: the newest commits of a move whose messages are processed. */
export const PROCESS_COMMIT_LIMIT = 100;

type BranchMoved = Extract<RepositoryEvent, { type: 'BranchCreated' | 'BranchUpdated' }>;

/**
 * The writer of a close by `author`: the push's cause and request, with the author as the actor
 * (Issues::CloseService.new(project, author): the closing event, the note and the activity are
 * the author's); the pusher's credentials (token, sudo) are not the author's and are left out.
 */
function authoredBy(w: Writer, author: { id: number; username: string } | undefined): Writer {
  if (!author || author.id === w.metadata.actor_id) return w;
  const { token_id: _token, impersonation: _impersonation, sudo_from_id: _sudo, user_agent: _agent, ...rest } = w.metadata;
  return { ctx: w.ctx, metadata: { ...rest, actor_id: author.id, actor_username: author.username } };
}

/** Whether `event` already closed the issue (a reaction run again after a crash closes nothing twice). */
async function closedBy(db: Db, issueId: number, event: StoredEvent): Promise<boolean> {
  const row = await db
    .selectFrom('events')
    .select('event_id')
    .where('stream_id', '=', issueStreamId(issueId))
    .where('event_type', '=', 'IssueClosed')
    .where(sql`metadata->>'causation_id'`, '=', event.eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/** ProcessCommitWorker#perform for each new commit of a branch move (`default`: the default branch, the only one that closes). */
export async function closeIssuesFromPush(stored: StoredEvent, ctx: CommandContext): Promise<void> {
  const { type, data } = stored as unknown as BranchMoved;
  const pusherId = stored.actorId;
  if (pusherId === null) return;
  const db = ctx.db;
  const project = await db
    .selectFrom('projects')
    .select(['id', 'path_with_namespace', 'default_branch', 'issues_enabled'])
    .where('id', '=', data.project_id)
    .where('pending_delete', '=', false)
    .executeTakeFirst();
  // Git::BranchHooksService#default_branch?: `[nil, branch_name].include?(project.default_branch)`;
  // Issues::CloseService#close_issue closes nothing when the pushed project has no issues.
  if (!project || (project.default_branch !== null && project.default_branch !== data.branch) || !project.issues_enabled) return;
  // BranchHooksService#commits: commits_between(oldrev, newrev) of a move, the newest PROCESS_COMMIT_LIMIT;
  // a created branch's commits are those its event lists (none of them on another branch).
  const shas = type === 'BranchUpdated' ? (await commitsBetween(db, data.project_id, data.old_sha, data.new_sha)).slice(0, PROCESS_COMMIT_LIMIT) : data.commits;
  // A quick look at each message first: most commits close nothing.
  const closing = (await findCommits(db, data.project_id, shas)).filter((c) => closingIssueReferences(c.message).length > 0).reverse();
  if (closing.length === 0) return;
  const authors = await usersByEmail(db, closing.map((c) => c.author.email));
  const pusher = causedBy(ctx, stored);
  const today = ctx.now().toISOString().slice(0, 10);
  // The pusher as each referenced project sees them, read once per project for the whole move.
  const pusherOn = new Map<number, Promise<Awaited<ReturnType<typeof projectSubjectsOf>>[number] | undefined>>();
  const pusherIn = (projectId: number) => {
    let subject = pusherOn.get(projectId);
    if (!subject) pusherOn.set(projectId, (subject = projectSubjectsOf(db, projectId, [pusherId], today).then(([one]) => one)));
    return subject;
  };
  for (const commit of closing) {
    // ProcessCommitWorker#process_commit_message: "Ignore closing references from GitLab-generated
    // commit messages" (Commit#merged_merge_request?: a merge commit that is a merge request's).
    if (commit.parents.length > 1) {
      const merged = await db.selectFrom('merge_requests').select('id').where('project_id', '=', project.id).where('merge_commit_sha', '=', commit.sha).executeTakeFirst();
      if (merged) continue;
    }
    const author = authors.get(commit.author.email.toLowerCase());
    const authorId = author?.id ?? pusherId;
    for (const issue of await referencedIssues(db, project, closingIssueReferences(commit.message))) {
      if (issue.state !== 'opened') continue;
      // Commit#closes_issues(user) as the pusher reads them, IssueCollection#updatable_by_user(user).
      const subject = await pusherIn(issue.project_id);
      if (!subject || !can(subject, 'read_issue') || !canOnIssue(subject, issue, 'update_issue')) continue;
      if (await closedBy(db, issue.id, stored)) continue;
      await run(authoredBy(pusher, author), issues, issue.id, { type: 'UpdateIssue', fields: {}, stateEvent: 'close', byId: authorId, viaCommit: { projectId: project.id, sha: commit.sha } });
    }
  }
}
