import type { Config } from '../../config.js';
import { taskCompletionStatus } from '../../domain/issuable-text.js';
import { licensed } from '../../domain/policy/licensed.js';
import type { IssueView } from '../../projections/issues/queries.js';
import { toLabelBasic } from './labels.js';
import { toTimeStats } from './merge-requests.js';
import { toMilestone } from './milestones.js';
import { projectWebUrl } from './projects.js';
import { iso, toUserBasic } from './users.js';

/** Gitlab::UrlBuilder of an issue: project_issue_url, by iid (under `/-/` since GitLab 12.8). */
export const issueWebUrl = (config: Config, pathWithNamespace: string, iid: number) => `${projectWebUrl(config, pathWithNamespace)}/-/issues/${iid}`;

/** Where an issue is presented (IssuableReferences' `relative` is relative to it): a project, a group, or nowhere (full paths). */
export type ReferenceContext = { readonly projectId: number; readonly projectPath: string } | { readonly groupPath: string } | null;

const namespaceOf = (path: string) => path.slice(0, path.lastIndexOf('/'));

/** Issue#to_reference(from) through Project#to_reference_base: nothing from its own project, its path from its namespace, else its full path. */
function relativeReference(view: IssueView, context: ReferenceContext): string {
  const short = `#${view.row.iid}`;
  if (context === null || ('projectId' in context && context.projectId === view.row.project_id)) return short;
  const sameNamespace = 'groupPath' in context ? namespaceOf(view.pathWithNamespace) === context.groupPath : namespaceOf(view.pathWithNamespace) === namespaceOf(context.projectPath);
  return sameNamespace ? `${view.pathWithNamespace.slice(view.pathWithNamespace.lastIndexOf('/') + 1)}${short}` : `${view.pathWithNamespace}${short}`;
}

function user(view: IssueView, id: number | null, config: Config) {
  const found = id === null ? undefined : view.users.get(id);
  return found ? toUserBasic(found, config) : null;
}

export interface IssueDetail {
  /** The single view's `subscribed`; lists leave it out (include_subscribed: false). */
  readonly subscribed?: boolean | undefined;
  readonly context: ReferenceContext;
  /** Merge requests that close the issue and the caller may read (`merge_requests_count`). */
  readonly mergeRequestsCount?: number | undefined;
  /** Entities::IssueBasic: IssueBasic's fields only. */
  readonly basic?: boolean | undefined;
  /** The lists' `with_labels_details`: labels as Entities::LabelBasic rather than titles. */
  readonly withLabelsDetails?: boolean | undefined;
  /** EE's `epic_iid` and `epic` (entities/epics.ts issueEpicFields), for a viewer who may read the project's group's epics. */
  readonly epic?: { readonly epic_iid: number | null; readonly epic: unknown } | undefined;
}

/**
 * Entities::Issue (GitLab 12.10), IssueBasic's fields then its own: lists and the single view
 * alike, `subscribed` on the single view only; EE's `weight` with issue_weights.
 */
export function toIssue(view: IssueView, config: Config, detail: IssueDetail) {
  const { row } = view;
  const assignees = row.assignee_ids.map((id) => user(view, id, config)).filter((u) => u !== null);
  const tasks = taskCompletionStatus(row.description);
  const api = `${config.externalUrl}/api/v4/projects/${row.project_id}`;
  const out: Record<string, unknown> = {
    id: row.id,
    iid: row.iid,
    project_id: row.project_id,
    title: row.title,
    description: row.description,
    state: row.state,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    closed_at: iso(row.closed_at),
    closed_by: user(view, row.closed_by_id, config),
    labels: detail.withLabelsDetails ? view.labels.map(toLabelBasic) : view.labels.map((l) => l.title),
    milestone: view.milestone ? toMilestone(view.milestone, config, view.pathWithNamespace) : null,
    assignees,
    author: user(view, row.author_id, config),
    assignee: assignees[0] ?? null,
    user_notes_count: view.userNotesCount,
    merge_requests_count: detail.mergeRequestsCount ?? 0,
    upvotes: view.upvotes,
    downvotes: view.downvotes,
    due_date: row.due_date,
    confidential: row.confidential,
    discussion_locked: row.discussion_locked,
    web_url: issueWebUrl(config, view.pathWithNamespace, row.iid),
    time_stats: toTimeStats(row),
    task_completion_status: tasks,
  };
  if (licensed(config.plan, 'issue_weights')) out.weight = row.weight;
  if (detail.basic) return out;
  out.has_tasks = tasks.count > 0;
  // Taskable#task_status.
  if (tasks.count > 0) out.task_status = `${tasks.completed_count} of ${tasks.count} ${tasks.count === 1 ? 'task' : 'tasks'} completed`;
  out._links = { self: `${api}/issues/${row.iid}`, notes: `${api}/issues/${row.iid}/notes`, award_emoji: `${api}/issues/${row.iid}/award_emoji`, project: api };
  out.references = { short: `#${row.iid}`, relative: relativeReference(view, detail.context), full: `${view.pathWithNamespace}#${row.iid}` };
  if (detail.subscribed !== undefined) out.subscribed = detail.subscribed;
  out.moved_to_id = row.moved_to_id;
  // EE::API::Entities::Issue, prepended: after the class's own fields.
  if (detail.epic) Object.assign(out, detail.epic);
  return out;
}

/** Entities::IssuesStatistics: `{ statistics: { counts: { all, closed, opened } } }`. */
export const toIssuesStatistics = (counts: { all: number; closed: number; opened: number }) => ({ statistics: { counts } });

/** Entities::UserAgentDetail. */
export const toUserAgentDetail = (detail: { userAgent: string; ip: string }) => ({ user_agent: detail.userAgent, ip_address: detail.ip, akismet_submitted: false });
