import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, visibleWithoutMembership, type Viewer } from '../../domain/access.js';
import { authorizedProjectIds } from '../access.js';
import { fullSearch, issuableConditions, labelCondition, lowestLabelPriority, milestoneCondition, withoutLabelsCondition, type IssuableFilters, type NoneOrAny } from '../issuable-filters.js';

/**
 * The issue lists' SQL (GitLab 12.10's IssuesFinder over IssuableFinder): which issues a list
 * holds, every filter of `issues_params`, the projects whose issues the caller may read and
 * the confidential issues among them the caller may see.
 */

export type { NoneOrAny } from '../issuable-filters.js';

/** The filters `not[…]` negates (negatable_issue_filter_params). */
export interface NegatableIssueFilters {
  readonly labels?: readonly string[] | undefined;
  readonly milestone?: string | undefined;
  readonly iids?: readonly number[] | undefined;
  readonly authorId?: number | undefined;
  readonly authorUsername?: string | undefined;
  readonly assigneeId?: number | NoneOrAny | undefined;
  readonly assigneeUsernames?: readonly string[] | undefined;
}

export interface IssueListFilters extends NegatableIssueFilters, IssuableFilters {
  readonly state: 'opened' | 'closed' | 'all';
  readonly search?: string | undefined;
  readonly in?: string | undefined;
  readonly confidential?: boolean | undefined;
  readonly weight?: number | NoneOrAny | undefined;
  readonly not?: NegatableIssueFilters | undefined;
}

/** Where a list looks: one project (read_project already checked), a group and its subgroups, or everywhere. */
export type IssueListSource = { readonly projectId: number } | { readonly groupId: number } | 'everywhere';

const issuesLevel = sql.raw(`coalesce(p.settings->>'issues_access_level', 'enabled')`);

/**
 * The ids of the projects whose issues the viewer may read — ProjectPolicy's read_issue:
 * the project open to the viewer with issues enabled, or the viewer a member (guest and up)
 * with issues enabled or private. Administrators read every project's whose issues are not
 * disabled. Projects pending deletion are left out; `within` narrows every set.
 */
export function issueReadableProjectIds(viewer: Viewer | null, within: RawBuilder<SqlBool> = sql`true`) {
  if (viewer?.isAdmin) return sql`select p.id from projects p where ${within} and not p.pending_delete and ${issuesLevel} in ('enabled', 'private')`;
  const open = sql`p.visibility in (${sql.join(visibleWithoutMembership(viewer))})`;
  const openEnabled = sql`select p.id from projects p where ${within} and not p.pending_delete and ${issuesLevel} = 'enabled' and ${open}`;
  if (!viewer) return openEnabled;
  return sql`${openEnabled}
    union select p.id from projects p where p.id = any(array(${authorizedProjectIds(viewer, ACCESS.GUEST)})) and ${within} and not p.pending_delete and ${issuesLevel} in ('enabled', 'private')`;
}

/**
 * IssuesFinder#with_confidentiality_access_check: administrators see every confidential issue;
 * the others those they wrote, are assigned to, or whose project they are a reporter of.
 */
function confidentialityCondition(viewer: Viewer | null): Expression<SqlBool> | undefined {
  if (viewer?.isAdmin) return undefined;
  if (!viewer) return sql<SqlBool>`not issues.confidential`;
  return sql<SqlBool>`(not issues.confidential or issues.author_id = ${viewer.id} or issues.assignee_ids @> array[${viewer.id}]::integer[]
    or issues.project_id = any(array(${authorizedProjectIds(viewer, ACCESS.REPORTER)})))`;
}

/**
 * Event#visible_to_user? for an event whose target is an issue (the activity feeds): the issue
 * still exists and the viewer may see it (its confidentiality, as the lists apply it).
 */
export function issueEventVisible(viewer: Viewer | null, targetId: RawBuilder<unknown>): RawBuilder<SqlBool> {
  const confidentiality = confidentialityCondition(viewer);
  return sql<SqlBool>`exists (select 1 from issues where issues.id = ${targetId}${confidentiality ? sql` and ${confidentiality}` : sql``})`;
}

const userNamed = (username: string) => sql`(select u.id from users u where lower(u.username) = ${username.toLowerCase()})`;

/** IssuableFinder#by_author (`author_username`), by_assignee (`assignee_username`), by_milestone and by_label. */
function positive(f: IssueListFilters, projectId: number | undefined): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  if (f.authorUsername !== undefined) where.push(sql<SqlBool>`issues.author_id = ${userNamed(f.authorUsername)}`);
  for (const username of f.assigneeUsernames ?? []) where.push(sql<SqlBool>`issues.assignee_ids @> array[${userNamed(username)}]::integer[]`);
  if (f.milestone !== undefined && f.milestone !== '') where.push(milestoneCondition('issues', f.milestone));
  const labels = f.labels === undefined ? undefined : labelCondition('issues', f.labels, projectId);
  if (labels) where.push(labels);
  return where;
}

/**
 * IssuableFinder#filter_negated_items: an author or assignee named but not found leaves no
 * issue (`items.none`), as does an assignee `None` or `Any` (no user has that id); the
 * labels are none of those titled; the milestone is another one or none.
 */
function negated(n: NegatableIssueFilters): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  const author = n.authorId !== undefined ? sql`(select u.id from users u where u.id = ${n.authorId})` : n.authorUsername !== undefined ? userNamed(n.authorUsername) : undefined;
  if (author) where.push(sql<SqlBool>`coalesce(issues.author_id <> ${author}, false)`);
  let assignees: RawBuilder<unknown> | undefined;
  if (typeof n.assigneeId === 'number') assignees = sql`(select array_agg(u.id) from users u where u.id = ${n.assigneeId})`;
  else if (n.assigneeId !== undefined) assignees = sql`null::integer[]`;
  else if (n.assigneeUsernames && n.assigneeUsernames.length > 0) {
    assignees = sql`(select array_agg(u.id) from users u where lower(u.username) = any(${n.assigneeUsernames.map((u) => u.toLowerCase())}::text[]))`;
  }
  if (assignees) where.push(sql<SqlBool>`coalesce(not (issues.assignee_ids && ${assignees}), false)`);
  const labels = n.labels === undefined ? undefined : withoutLabelsCondition('issues', n.labels);
  if (labels) where.push(labels);
  if (n.milestone !== undefined && n.milestone !== '') where.push(sql<SqlBool>`not coalesce(${milestoneCondition('issues', n.milestone)}, false)`);
  if (n.iids && n.iids.length > 0) where.push(sql<SqlBool>`issues.iid <> all(${[...n.iids]}::integer[])`);
  return where;
}

/** The conditions of a list, in IssuableFinder#filter_items' order. */
export function issueListConditions(viewer: Viewer | null, source: IssueListSource, f: IssueListFilters): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  let projectId: number | undefined;
  if (source === 'everywhere') {
    where.push(sql<SqlBool>`(issues.project_id in (${issueReadableProjectIds(viewer)})) is true`);
  } else if ('groupId' in source) {
    const subtree = sql<SqlBool>`p.traversal_ids && array[${source.groupId}]::integer[]`;
    where.push(sql<SqlBool>`issues.project_id in (${issueReadableProjectIds(viewer, subtree)})`);
  } else {
    projectId = source.projectId;
    where.push(sql<SqlBool>`issues.project_id in (${issueReadableProjectIds(viewer, sql<SqlBool>`p.id = ${source.projectId}`)})`);
  }
  const confidentiality = confidentialityCondition(viewer);
  if (confidentiality) where.push(confidentiality);
  where.push(...issuableConditions('issues', viewer, f), ...positive(f, projectId));
  if (f.not) where.push(...negated(f.not));
  if (f.confidential !== undefined) where.push(sql<SqlBool>`issues.confidential = ${f.confidential}`);
  if (f.weight === 'none') where.push(sql<SqlBool>`issues.weight is null`);
  else if (f.weight === 'any') where.push(sql<SqlBool>`issues.weight is not null`);
  else if (f.weight !== undefined) where.push(sql<SqlBool>`issues.weight = ${f.weight}`);
  const search = f.search === undefined ? undefined : fullSearch('issues', f.search, f.in);
  if (search) where.push(search);
  return where;
}

/** The filtered selection, unordered. */
export function issueListQuery(db: Db, viewer: Viewer | null, source: IssueListSource, filters: IssueListFilters) {
  let query = db.selectFrom('issues').selectAll('issues');
  for (const condition of issueListConditions(viewer, source, filters)) query = query.where(condition);
  return query;
}

export const ISSUE_ORDERS = ['created_at', 'updated_at', 'priority', 'due_date', 'relative_position', 'label_priority', 'milestone_due', 'popularity'] as const;
export type IssueOrder = (typeof ISSUE_ORDERS)[number];

const labelPriority = lowestLabelPriority('issues');
const upvotes = sql`(select count(*) from award_emoji a where a.awardable_type = 'Issue' and a.awardable_id = issues.id and a.name = 'thumbsup')`;
const milestoneDue = sql`(select m.due_date from milestones m where m.id = issues.milestone_id)`;

/**
 * Issue.sort_by_attribute (`<order_by>_<sort>`, GitLab 12.10's IssuesHelpers#issue_finder): ties
 * broken by the id, newest first, whatever the direction (Issuable's `with_order_id_desc`; the
 * merge request lists break them in the order's direction, API::MergeRequests' order_options_with_tie_breaker).
 * Due dates, positions, milestones' due dates and label priorities sort nulls last both ways;
 * `priority` is the milestone's due date then the label priority (Issuable.order_priority);
 * `popularity` the upvotes (thumbsup awards, Issuable.order_upvotes_desc).
 */
export function issueOrder(order: IssueOrder, sort: 'asc' | 'desc'): RawBuilder<unknown> {
  const dir = sql.raw(sort);
  const id = sql`issues.id desc`;
  switch (order) {
    case 'created_at':
    case 'updated_at':
      return sql`${sql.ref(`issues.${order}`)} ${dir}, ${id}`;
    case 'due_date':
    case 'relative_position':
      return sql`${sql.ref(`issues.${order}`)} ${dir} nulls last, ${id}`;
    case 'milestone_due':
      return sql`${milestoneDue} ${dir} nulls last, ${id}`;
    case 'label_priority':
      return sql`${labelPriority} ${dir} nulls last, ${id}`;
    case 'priority':
      return sql`${milestoneDue} ${dir} nulls last, ${labelPriority} ${dir} nulls last, ${id}`;
    case 'popularity':
      return sql`${upvotes} ${dir}, ${id}`;
  }
}
