import { can } from '../domain/policy/can.js';
import type { MergeRequestEventOf } from '../domain/merge-requests/events.js';
import { mergeRequestClosingReferences } from '../domain/issues/references.js';
import { issues } from '../domain/issues/aggregate.js';
import type { StoredEvent } from '../eventstore/types.js';
import { projectSubjectsOf } from '../projections/access.js';
import { canOnIssue, referencedIssues } from '../projections/issues/queries.js';
import { closeIssuesFromPush } from './issue-closing-commits.js';
import { causedBy } from './kernel/causation.js';
import type { CommandContext } from './kernel/context.js';
import { run } from './kernel/run.js';
import type { Reactor } from './kernel/reactor.js';

/**
 * GitLab 12's MergeRequests::PostMergeService#close_issues: a merge request merged into its
 * project's default branch closes the open issues its title and description close (`Closes #1`,
 * `Fixes group/project#2`, ClosingIssueExtractor), each one the merger may update, closed by
 * the merger. The same reactor closes the issues that commits pushed to the default branch close
 * (./issue-closing-commits.ts), in the log's order: a merge's MergeRequestMerged comes before
 * its branch move, so an issue both close is closed once, by the merge request.
 */
export const issueClosingReactor: Reactor = {
  name: 'issue-closing',
  handles: ['MergeRequestMerged', 'BranchCreated', 'BranchUpdated'],
  startAt: 'head',
  async react(stored: StoredEvent, ctx: CommandContext) {
    if (stored.type !== 'MergeRequestMerged') return closeIssuesFromPush(stored, ctx);
    const { data } = stored as unknown as MergeRequestEventOf<'MergeRequestMerged'>;
    const mr = await ctx.db.selectFrom('merge_requests').select(['title', 'description', 'target_branch']).where('id', '=', data.id).executeTakeFirst();
    const project = await ctx.db.selectFrom('projects').select(['id', 'path_with_namespace', 'default_branch']).where('id', '=', data.project_id).executeTakeFirst();
    if (!mr || !project) return;
    const today = ctx.now().toISOString().slice(0, 10);
    for (const issue of await referencedIssues(ctx.db, project, mergeRequestClosingReferences(mr, project.default_branch))) {
      if (issue.state !== 'opened') continue;
      const [merger] = await projectSubjectsOf(ctx.db, issue.project_id, [data.by_id], today);
      if (!merger || !can(merger, 'read_issue') || !canOnIssue(merger, issue, 'update_issue')) continue;
      await run(causedBy(ctx, stored), issues, issue.id, { type: 'UpdateIssue', fields: {}, stateEvent: 'close', byId: data.by_id });
    }
  },
};
