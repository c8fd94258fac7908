import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, visibleWithoutMembership, type Viewer } from '../../domain/access.js';
import { authorizedProjectIds } from '../access.js';
import { fullSearch, labelCondition, milestoneCondition } from '../issuable-filters.js';

/**
 * The issue lists' SQL (GitLab 12.10's IssuesFinder over IssuableFinder): which issues a list
 * holds, every filter of `issues_params`, the projects whose issues the caller may read and
 * the confidential issues among them the caller may see.
 */

export type NoneOrAny = 'none' | 'any';

/** The filters `not[…]` negates (negatable_issue_filter_params). */
export interface NegatableIssueFilters {
  readonly labels?: readonly string[] | undefined;
  readonly milestone?: string | undefined;
  readonly iids?: readonly number[] | undefined;
  readonly authorId?: number | undefined;
  readonly authorUsername?: string | undefined;
  readonly assigneeId?: number | undefined;
  readonly assigneeUsernames?: readonly string[] | undefined;
}

export interface IssueListFilters extends Omit<NegatableIssueFilters, 'assigneeId'> {
  readonly state: 'opened' | 'closed' | 'all';
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly updatedAfter?: Date | undefined;
  readonly updatedBefore?: Date | undefined;
  /** Underscored (`created-by-me` arrives as `created_by_me`); undefined is `all`. */
  readonly scope?: 'created_by_me' | 'assigned_to_me' | 'all' | undefined;
  readonly assigneeId?: number | NoneOrAny | undefined;
  readonly myReactionEmoji?: string | undefined;
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

/** The negatable filters as conditions, negated or not (IssuableFinder and its `not` twin). */
function negatable(f: NegatableIssueFilters | IssueListFilters, projectId: number | undefined, negate: boolean): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  const add = (condition: Expression<SqlBool> | undefined) => {
    if (condition) where.push(negate ? sql<SqlBool>`not coalesce(${condition}, false)` : condition);
  };
  if (f.authorId !== undefined) add(sql<SqlBool>`issues.author_id = ${f.authorId}`);
  if (f.authorUsername !== undefined) add(sql<SqlBool>`issues.author_id = ${userNamed(f.authorUsername)}`);
  if (typeof f.assigneeId === 'number') add(sql<SqlBool>`issues.assignee_ids @> array[${f.assigneeId}]::integer[]`);
  for (const username of f.assigneeUsernames ?? []) add(sql<SqlBool>`issues.assignee_ids @> array[${userNamed(username)}]::integer[]`);
  if (f.milestone !== undefined && f.milestone !== '') add(milestoneCondition('issues', f.milestone));
  if (f.labels !== undefined) add(labelCondition('issues', f.labels, projectId));
  if (f.iids && f.iids.length > 0) add(sql<SqlBool>`issues.iid = any(${[...f.iids]}::integer[])`);
  return where;
}

/** The conditions of a list, in IssuableFinder#filter_items' order. */
export function issueListConditions(viewer: Viewer | null, source: IssueListSource, f: IssueListFilters): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  const none = sql<SqlBool>`false`;
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
  if (f.scope === 'created_by_me') where.push(viewer ? sql<SqlBool>`issues.author_id = ${viewer.id}` : none);
  if (f.scope === 'assigned_to_me') where.push(viewer ? sql<SqlBool>`issues.assignee_ids @> array[${viewer.id}]::integer[]` : none);
  if (f.state !== 'all') where.push(sql<SqlBool>`issues.state = ${f.state}`);
  if (f.assigneeId === 'none') where.push(sql<SqlBool>`cardinality(issues.assignee_ids) = 0`);
  if (f.assigneeId === 'any') where.push(sql<SqlBool>`cardinality(issues.assignee_ids) > 0`);
  where.push(...negatable(f, projectId, false));
  if (f.not) where.push(...negatable(f.not, projectId, true));
  // by_my_reaction_emoji, for a signed-in caller: None is every issue without the caller's award, Any or a name those with one.
  if (viewer && f.myReactionEmoji !== undefined && f.myReactionEmoji !== '' && f.myReactionEmoji.toLowerCase() !== 'none') where.push(none);
  if (f.confidential !== undefined) where.push(sql<SqlBool>`issues.confidential = ${f.confidential}`);
  if (f.weight === 'none') where.push(sql<SqlBool>`issues.weight is null`);
  else if (f.weight === 'any') where.push(sql<SqlBool>`issues.weight is not null`);
  else if (f.weight !== undefined) where.push(sql<SqlBool>`issues.weight = ${f.weight}`);
  if (f.createdAfter) where.push(sql<SqlBool>`issues.created_at >= ${f.createdAfter.toISOString()}::timestamptz`);
  if (f.createdBefore) where.push(sql<SqlBool>`issues.created_at <= ${f.createdBefore.toISOString()}::timestamptz`);
  if (f.updatedAfter) where.push(sql<SqlBool>`issues.updated_at >= ${f.updatedAfter.toISOString()}::timestamptz`);
  if (f.updatedBefore) where.push(sql<SqlBool>`issues.updated_at <= ${f.updatedBefore.toISOString()}::timestamptz`);
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

const lowestLabelPriority = sql`(select min(l.priority) from labels l where l.id = any(issues.label_ids) and l.priority is not null)`;
const upvotes = sql`(select count(*) from award_emoji a where a.awardable_type = 'Issue' and a.awardable_id = issues.id and a.name = 'thumbsup')`;
const milestoneDue = sql`(select m.due_date from milestones m where m.id = issues.milestone_id)`;

/**
 * Issue.sort_by_attribute (`<order_by>_<sort>`): created_at and updated_at with ties broken
 * by the id the same way, the others `with_order_id_desc`; due dates, positions, milestones' due dates and label priorities sort nulls last
 * both ways; `priority` is the milestone's due date then the label priority
 * (Issuable.order_priority); `popularity` the upvotes (thumbsup awards, Issuable.order_upvotes_desc).
 */
export function issueOrder(order: IssueOrder, sort: 'asc' | 'desc'): RawBuilder<unknown> {
  const dir = sql.raw(sort);
  const id = sql`issues.id desc`;
  switch (order) {
    case 'created_at':
    case 'updated_at':
      return sql`${sql.ref(`issues.${order}`)} ${dir}, issues.id ${dir}`;
    case 'due_date':
    case 'relative_position':
      return sql`${sql.ref(`issues.${order}`)} ${dir} nulls last, ${id}`;
    case 'milestone_due':
      return sql`${milestoneDue} ${dir} nulls last, ${id}`;
    case 'label_priority':
      return sql`${lowestLabelPriority} ${dir} nulls last, ${id}`;
    case 'priority':
      return sql`${milestoneDue} ${dir} nulls last, ${lowestLabelPriority} ${dir} nulls last, ${id}`;
    case 'popularity':
      return sql`${upvotes} ${dir}, ${id}`;
  }
}
