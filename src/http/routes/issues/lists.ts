import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import { labelNames } from '../../../commands/labels.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { viewerOf } from '../../../projections/access.js';
import { ISSUE_ORDERS, issueListQuery, issueOrder, type IssueListFilters, type IssueListSource, type NegatableIssueFilters, type NoneOrAny } from '../../../projections/issues/list-query.js';
import { issueViews } from '../../../projections/issues/queries.js';
import { toIssue, toIssuesStatistics, type ReferenceContext } from '../../entities/issues.js';
import { authenticate } from '../../kernel/auth.js';
import { unauthorized } from '../../kernel/errors.js';
import { appContext, today, type AppEnv, type Auth } from '../../kernel/context.js';
import { COUNT_LIMIT, paginate } from '../../kernel/pagination.js';
import { DomainError } from '../../../domain/errors.js';
import { documented } from '../../kernel/documented.js';
import { declaration, INTEGER_TEXT, INT4_MAX, optional, rawParams, t, withDefault, type RawParams, type Shape } from '../../kernel/params.js';
import { userGroup, userProject } from '../../kernel/scope.js';
import { epicFieldsOf } from './find.js';

/**
 * GitLab 12.10's issue lists and statistics (API::Issues with `issues_params` /
 * `issues_stats_params`, IssuesFinder): GET /issues, /groups/:id/issues,
 * /projects/:id/issues and their `issues_statistics`. GETs are open to anonymous callers
 * (authenticate_non_get!), except the global ones without `scope=all` (401).
 */

const SCOPES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const;

const isNoneOrAny = (value: unknown): value is string => typeof value === 'string' && ['none', 'any'].includes(value.toLowerCase());

/** `types: [Integer, String], integer_none_any: true`. */
function integerNoneAny(raw: RawParams, name: string, errors: string[]): number | NoneOrAny | undefined {
  const value = raw[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && INTEGER_TEXT.test(value) && Math.abs(Number(value)) <= INT4_MAX) return Number(value);
  if (isNoneOrAny(value)) return value.toLowerCase() as NoneOrAny;
  errors.push(`${name} should be an integer, 'None' or 'Any'`);
  return undefined;
}

/** `negatable_issue_filter_params` but `assignee_id` (integer_none_any); `search` and `in` are declared and ignored (IssuableFinder negates neither). */
const negatableShape = {
  labels: optional(t.array(t.string())),
  milestone: optional(t.string()),
  iids: optional(t.array(t.integer())),
  search: optional(t.string()),
  in: optional(t.string()),
  author_id: optional(t.integer()),
  author_username: optional(t.string()),
  assignee_username: optional(t.array(t.string())),
};
const NEGATABLE_EXCLUSIVE = { mutuallyExclusive: [['author_id', 'author_username'], ['assignee_id', 'assignee_username']] };
const NEGATABLE_NAME = new RegExp(`\\b(${[...Object.keys(negatableShape), 'assignee_id'].join('|')})\\b`, 'g');

/** `optional :not, type: Hash do use :negatable_issue_filter_params end`: Grape names a nested failure `not[iids]`. */
function negatableOf(raw: RawParams, check: (message: string) => void): NegatableIssueFilters | undefined {
  if (raw.not === undefined || raw.not === null) return undefined;
  if (typeof raw.not !== 'object' || Array.isArray(raw.not)) {
    check('not is invalid');
    return undefined;
  }
  const inner = raw.not as RawParams;
  const p = declaration(inner);
  const n = p.parse(negatableShape, NEGATABLE_EXCLUSIVE);
  const errors: string[] = [];
  const assigneeId = integerNoneAny(inner, 'assignee_id', errors);
  for (const error of errors) p.check(error);
  try {
    p.done();
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'invalid_params') throw error;
    for (const message of error.params ?? []) check(message.replace(NEGATABLE_NAME, 'not[$1]'));
    return undefined;
  }
  return { labels: n.labels === undefined ? undefined : labelNames(n.labels), milestone: n.milestone, iids: n.iids, authorId: n.author_id, authorUsername: n.author_username, assigneeId, assigneeUsernames: n.assignee_username };
}

/** `issues_params`' own head (the lists; the statistics take none of it). */
const listHeadShape = {
  with_labels_details: withDefault(t.boolean(), false),
  state: withDefault(t.values(['opened', 'closed', 'all']), 'all'),
  order_by: withDefault(t.values(ISSUE_ORDERS), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
} satisfies Shape;

/** `issues_stats_params` and `scope`, which the lists and the statistics share. */
const filterShape = {
  ...negatableShape,
  created_after: optional(t.datetime()),
  created_before: optional(t.datetime()),
  updated_after: optional(t.datetime()),
  updated_before: optional(t.datetime()),
  scope: optional(t.values(SCOPES)),
  my_reaction_emoji: optional(t.string()),
  confidential: optional(t.boolean()),
} satisfies Shape;

/**
 * What the lists and statistics document: the shapes above and `not` (`type: Hash`, its
 * members those of negatable_issue_filter_params). `assignee_id` and EE's `weight` (an
 * integer, `None` or `Any`) are read from the raw parameters, not a shape, and are not in it.
 */
const statsParams = { ...filterShape, not: optional(t.hash()) } satisfies Shape;
const listParams = { ...listHeadShape, ...statsParams } satisfies Shape;

interface Declared {
  readonly filters: IssueListFilters;
  readonly orderBy: (typeof ISSUE_ORDERS)[number];
  readonly sort: 'asc' | 'desc';
  readonly rawScope: string | undefined;
  readonly withLabelsDetails: boolean;
}

/** `issues_params` (lists) or `issues_stats_params` (statistics), every failure together; a default scope for the global ones. */
async function declared(c: Context, options: { stats: boolean; defaultScope?: 'created_by_me' }): Promise<Declared> {
  const raw = await rawParams(c);
  const p = declaration(raw);
  const head = options.stats
    ? { with_labels_details: false, state: 'all' as const, order_by: 'created_at' as const, sort: 'desc' as const }
    : p.parse(listHeadShape);
  const f = p.parse(filterShape, { mutuallyExclusive: [['author_id', 'author_username'], ['assignee_id', 'assignee_username']] });
  const errors: string[] = [];
  const assigneeId = integerNoneAny(raw, 'assignee_id', errors);
  const weight = licensed(appContext(c).config.plan, 'issue_weights') ? integerNoneAny(raw, 'weight', errors) : undefined;
  for (const error of errors) p.check(error);
  // CE: `check_assignees_count`, one username only.
  if ((f.assignee_username?.length ?? 0) > 1 && !licensed(appContext(c).config.plan, 'multiple_issue_assignees')) p.check('assignee_username allows one value, but found 2');
  const not = negatableOf(raw, (message) => p.check(message));
  // GET /issues_statistics declares `scope` again, underscored values only: both declarations validate.
  if (options.stats && options.defaultScope && f.scope !== undefined && f.scope.includes('-')) p.check('scope does not have a valid value');
  p.done();
  const rawScope = f.scope ?? options.defaultScope;
  return {
    orderBy: head.order_by,
    sort: head.sort,
    rawScope,
    withLabelsDetails: head.with_labels_details,
    filters: {
      state: head.state,
      labels: f.labels === undefined ? undefined : labelNames(f.labels),
      milestone: f.milestone,
      iids: f.iids,
      search: f.search,
      in: f.in,
      authorId: f.author_id,
      authorUsername: f.author_username,
      assigneeId,
      assigneeUsernames: f.assignee_username,
      createdAfter: f.created_after,
      createdBefore: f.created_before,
      updatedAfter: f.updated_after,
      updatedBefore: f.updated_before,
      scope: rawScope?.replace(/-/g, '_') as IssueListFilters['scope'],
      myReactionEmoji: f.my_reaction_emoji,
      confidential: f.confidential,
      weight,
      not,
    },
  };
}

/** One page of a list as Entities::Issue without `subscribed` (include_subscribed: false). */
async function present(c: Context, auth: Auth, source: IssueListSource, d: Declared, context: ReferenceContext, options: { countLimit?: number; knownPath?: [number, string] } = {}) {
  const { db, config } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  const query = issueListQuery(db, viewer, source, d.filters);
  const rows = await paginate(c, query, (q) => q.orderBy(issueOrder(d.orderBy, d.sort)), options);
  const views = await issueViews(db, rows, options.knownPath ? new Map([options.knownPath]) : undefined);
  const epics = await epicFieldsOf(c, viewer, rows);
  return c.json(views.map((view) => toIssue(view, config, { context, withLabelsDetails: d.withLabelsDetails, epic: epics.get(view.row.id) })));
}

/** Entities::IssuesStatistics: the counts of the filtered issues, whatever `state` says. */
async function statistics(c: Context, auth: Auth, source: IssueListSource, d: Declared) {
  const { db } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  const row = await issueListQuery(db, viewer, source, { ...d.filters, state: 'all' })
    .clearSelect()
    .select([sql<string>`count(*)`.as('all'), sql<string>`count(*) filter (where issues.state = 'closed')`.as('closed'), sql<string>`count(*) filter (where issues.state = 'opened')`.as('opened')])
    .executeTakeFirstOrThrow();
  return c.json(toIssuesStatistics({ all: Number(row.all), closed: Number(row.closed), opened: Number(row.opened) }));
}

export const issueListRoutes = new Hono<AppEnv>()
  .get('/issues', documented({ summary: "Get currently authenticated user's issues", params: listParams, auth: 'optional', responses: { 200: 'Issue[]' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: false, defaultScope: 'created_by_me' });
    // GitLab: `authenticate! unless params[:scope] == 'all'`.
    if (d.rawScope !== 'all' && !auth.user) throw unauthorized();
    return present(c, auth, 'everywhere', d, null, { countLimit: COUNT_LIMIT });
  })
  .get('/groups/:id/issues', documented({ summary: 'Get a list of group issues', params: listParams, auth: 'optional', responses: { 200: 'Issue[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: false });
    const group = await userGroup(c, auth);
    return present(c, auth, { groupId: group.row.id }, d, { groupPath: group.row.full_path }, { countLimit: COUNT_LIMIT });
  })
  .get('/projects/:id/issues', documented({ summary: 'Get a list of project issues', params: listParams, auth: 'optional', responses: { 200: 'Issue[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: false });
    const project = await userProject(c, auth);
    return present(c, auth, { projectId: project.row.id }, d, { projectId: project.row.id, projectPath: project.row.path_with_namespace }, { knownPath: [project.row.id, project.row.path_with_namespace] });
  })
  .get('/issues_statistics', documented({ summary: "Get currently authenticated user's issues statistics", params: statsParams, auth: 'optional', responses: { 200: 'IssuesStatistics' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: true, defaultScope: 'created_by_me' });
    if (d.rawScope !== 'all' && !auth.user) throw unauthorized();
    return statistics(c, auth, 'everywhere', d);
  })
  .get('/groups/:id/issues_statistics', documented({ summary: 'Get statistics for the list of group issues', params: statsParams, auth: 'optional', responses: { 200: 'IssuesStatistics', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: true });
    const group = await userGroup(c, auth);
    return statistics(c, auth, { groupId: group.row.id }, d);
  })
  .get('/projects/:id/issues_statistics', documented({ summary: 'Get statistics for the list of project issues', params: statsParams, auth: 'optional', responses: { 200: 'IssuesStatistics', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { stats: true });
    const project = await userProject(c, auth);
    return statistics(c, auth, { projectId: project.row.id }, d);
  });
