import type { DataOf } from '../aggregates.js';
import { issuableChanges, type IssuableChanges } from './payloads-issuables.js';
import { issueActionChanges, issueData, type IssueAction, type IssueFacts } from './payloads-issues.js';
import { noteData, type NoteableFacts } from './payloads-notes.js';
import type { HookFacts, HookMessage } from './facts.js';

/**
 * The rows of the hook table for issues and notes (src/domain/hooks/triggers.ts): Issue Hook
 * and Note Hook messages, to the confidential scope when the issue is confidential.
 */

export async function issueMessage(id: number, action: IssueAction, facts: HookFacts, changes?: (issue: IssueFacts) => Promise<IssuableChanges>): Promise<HookMessage[]> {
  const issue = await facts.issue(id);
  if (!issue || !facts.actor) return [];
  const name = issue.confidential ? 'confidential_issue_hooks' : 'issue_hooks';
  return [{ name, projectId: issue.projectId, payload: issueData(issue, facts.actor, action, changes ? await changes(issue) : {}) }];
}

/** What an issue's opening, closing or reopening changed, as GitLab 12.10 tells it (issueActionChanges). */
export const issueActionMessage = (id: number, action: 'open' | 'close' | 'reopen', facts: HookFacts) =>
  issueMessage(id, action, facts, async (issue) => issueActionChanges(action, issue, action === 'reopen' ? await facts.issue(id, true) : undefined));

/** What an issue's update changed: the issue just before it against after it (IssuableBuilder#final_changes). */
export async function issueUpdateChanges(d: DataOf<'IssueUpdated'>, issue: IssueFacts, facts: HookFacts): Promise<IssuableChanges> {
  const before = await facts.issue(d.id, true);
  if (!before) return {};
  return issuableChanges(d.changes, before, issue, {
    title: (i) => i.title,
    description: (i) => i.description,
    milestone_id: (i) => i.milestoneId,
    due_date: (i) => i.dueDate,
    confidential: (i) => i.confidential,
    discussion_locked: (i) => i.discussionLocked,
    weight: (i) => i.weight,
  });
}

/**
 * A user note on a project's merge request, issue, commit or snippet (an epic's note has no
 * project: no hook hears it). The user is the note's author.
 */
export async function noteMessage(d: DataOf<'NoteAdded'>, facts: HookFacts): Promise<HookMessage[]> {
  if (d.project_id === null) return [];
  const [project, [author]] = await Promise.all([facts.project(d.project_id), facts.users([d.author_id])]);
  const noteable = await noteableOf(d, facts);
  if (!project || !author || !noteable) return [];
  const at = new Date(d.created_at);
  const note = {
    id: d.id,
    authorId: d.author_id,
    body: d.body,
    type: d.type,
    noteableType: d.noteable_type,
    noteableId: d.noteable_id,
    commitId: d.commit_id,
    discussionId: d.discussion_id,
    lineCode: d.line_code,
    position: d.position,
    projectId: d.project_id,
    resolvedAt: d.resolved ? at : null,
    resolvedById: d.resolved ? d.author_id : null,
    createdAt: at,
    updatedAt: at,
    // A commit comment on a line (LegacyDiffNote) carries its file's diff; commits never change, so it is the one GitLab stored.
    stDiff: d.type === 'LegacyDiffNote' && d.commit_id !== null && d.line_code !== null ? await facts.legacyDiff(d.project_id, d.commit_id, d.line_code) : null,
  };
  const confidential = noteable.kind === 'issue' && noteable.issue.confidential;
  return [{ name: confidential ? 'confidential_note_hooks' : 'note_hooks', projectId: d.project_id, payload: noteData(note, author, project, noteable) }];
}

async function noteableOf(d: DataOf<'NoteAdded'>, facts: HookFacts): Promise<NoteableFacts | undefined> {
  const projectId = d.project_id!;
  if (d.noteable_type === 'MergeRequest' && d.noteable_id !== null) {
    const mergeRequest = await facts.mergeRequest(d.noteable_id);
    return mergeRequest && { kind: 'merge_request', mergeRequest };
  }
  if (d.noteable_type === 'Issue' && d.noteable_id !== null) {
    const issue = await facts.issue(d.noteable_id);
    return issue && { kind: 'issue', issue };
  }
  if (d.noteable_type === 'Commit' && d.commit_id !== null) {
    const [commit] = await facts.commits(projectId, [d.commit_id]);
    return commit && { kind: 'commit', commit };
  }
  if (d.noteable_type === 'Snippet' && d.noteable_id !== null) {
    const snippet = await facts.snippet(d.noteable_id);
    return snippet && { kind: 'snippet', snippet };
  }
  return undefined;
}
