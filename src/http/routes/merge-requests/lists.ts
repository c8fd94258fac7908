import { Hono, type Context } from 'hono';
import { viewerOf } from '../../../projections/access.js';
import { COUNT_LIMIT, paginate } from '../../kernel/pagination.js';
import { mergeRequestListQuery, type MergeRequestListFilters, type MergeRequestListSource, type NoneOrAny } from '../../../projections/merge-requests/list-query.js';
import { mergeRequestViews } from '../../../projections/merge-requests/queries.js';
import { toMergeRequestBasic, toMergeRequestSimple } from '../../entities/merge-requests.js';
import { authenticate } from '../../kernel/auth.js';
import { unauthorized } from '../../kernel/errors.js';
import { appContext, today, type AppEnv, type Auth } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, INTEGER_TEXT, INT4_MAX, optional, rawParams, t, withDefault, type RawParams, type Shape } from '../../kernel/params.js';
import { type ProjectScope, userGroup, userProject } from '../../kernel/scope.js';

/**
 * GitLab 12's merge request lists (API::MergeRequests with `merge_requests_params`, and
 * MergeRequestsFinder): GET /merge_requests, /projects/:id/merge_requests and
 * /groups/:id/merge_requests. GETs are open to anonymous callers (authenticate_non_get!),
 * except the global list without `scope=all` (401). Grape's declaration comes first (400),
 * then the project or group (404 hidden; 403 without read_merge_request on a project).
 */

const SCOPES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const;

const headShape = {
  state: withDefault(t.values(['opened', 'closed', 'locked', 'merged', 'all']), 'all'),
  order_by: withDefault(t.values(['created_at', 'updated_at']), 'created_at'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  milestone: optional(t.string()),
  labels: optional(t.array(t.string())),
  created_after: optional(t.datetime()),
  created_before: optional(t.datetime()),
  updated_after: optional(t.datetime()),
  updated_before: optional(t.datetime()),
  view: optional(t.values(['simple'])),
  author_id: optional(t.integer()),
} satisfies Shape;

const tailShape = {
  scope: optional(t.values(SCOPES)),
  my_reaction_emoji: optional(t.string()),
  source_branch: optional(t.string()),
  source_project_id: optional(t.integer()),
  target_branch: optional(t.string()),
  search: optional(t.string()),
  in: optional(t.string()),
  wip: optional(t.values(['yes', 'no'])),
} satisfies Shape;

/** The project list's `iids` (`optional :iids, type: Array[Integer]`). */
const iidsShape = { iids: optional(t.array(t.integer())) } satisfies Shape;

/**
 * What the lists document: `assignee_id` (an integer, `None` or `Any`) and EE's `approver_ids`
 * (an array, `None` or `Any`) are read from the raw parameters, not a shape, and are not in it.
 */
const listParams = { ...headShape, ...tailShape } satisfies Shape;

const isNoneOrAny = (value: unknown): value is string => typeof value === 'string' && ['none', 'any'].includes(value.toLowerCase());

/** `types: [Integer, String], integer_none_any: true` (API::Helpers::CustomValidators::IntegerNoneAny). */
function assigneeOf(raw: RawParams, errors: string[]): number | NoneOrAny | undefined {
  const value = raw.assignee_id;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && INTEGER_TEXT.test(value) && Math.abs(Number(value)) <= INT4_MAX) return Number(value);
  if (isNoneOrAny(value)) return value.toLowerCase() as NoneOrAny;
  errors.push(Array.isArray(value) || typeof value === 'object' ? 'assignee_id is invalid' : "assignee_id should be an integer, 'None' or 'Any'");
  return undefined;
}

/** EE's `approver_ids, types: [String, Array], array_none_any: true` (ArrayNoneAny). */
function approversOf(raw: RawParams, errors: string[]): readonly unknown[] | NoneOrAny | undefined {
  const value = raw.approver_ids;
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.filter((v) => v !== '');
  if (isNoneOrAny(value)) return value.toLowerCase() as NoneOrAny;
  errors.push("approver_ids should be an array, 'None' or 'Any'");
  return undefined;
}

/** Validations::Types::LabelsList: a comma list, or an array of them, each name stripped. */
const labelNames = (labels: readonly string[] | undefined) =>
  labels
    ?.flatMap((label) => label.split(','))
    .map((label) => label.trim())
    .filter((label) => label !== '');

interface Declared {
  readonly filters: MergeRequestListFilters;
  readonly orderBy: 'created_at' | 'updated_at';
  readonly sort: 'asc' | 'desc';
  readonly simple: boolean;
  /** The raw scope as sent (the global list's 401 compares it with 'all' before underscoring). */
  readonly rawScope: string | undefined;
}

/** `merge_requests_params` in GitLab's order, every failure together; `iids` for the project list, a default scope for the global one. */
async function declared(c: Context, options: { iids?: boolean; defaultScope?: 'created_by_me' }): Promise<Declared> {
  const raw = await rawParams(c);
  const p = declaration(raw);
  const head = p.parse(headShape);
  const errors: string[] = [];
  const assigneeId = assigneeOf(raw, errors);
  for (const error of errors.splice(0)) p.check(error);
  const tail = p.parse(tailShape);
  const approverIds = approversOf(raw, errors);
  for (const error of errors.splice(0)) p.check(error);
  const iids = options.iids ? p.parse(iidsShape).iids : undefined;
  p.done();
  const rawScope = tail.scope ?? options.defaultScope;
  const scope = rawScope?.replace(/-/g, '_') as MergeRequestListFilters['scope'];
  return {
    orderBy: head.order_by,
    sort: head.sort,
    simple: head.view === 'simple',
    rawScope,
    filters: {
      state: head.state,
      milestone: head.milestone,
      labels: labelNames(head.labels),
      createdAfter: head.created_after,
      createdBefore: head.created_before,
      updatedAfter: head.updated_after,
      updatedBefore: head.updated_before,
      scope,
      authorId: head.author_id,
      assigneeId,
      approverIds,
      myReactionEmoji: tail.my_reaction_emoji,
      sourceBranch: tail.source_branch,
      sourceProjectId: tail.source_project_id,
      targetBranch: tail.target_branch,
      search: tail.search,
      in: tail.in,
      wip: tail.wip,
      iids,
    },
  };
}

/** One page of a list, ordered by `order_by` and `sort` (the id breaks ties the same way), as MergeRequestBasic or MergeRequestSimple. */
async function present(c: Context, auth: Auth, source: MergeRequestListSource, d: Declared, options: { countLimit?: number; project?: ProjectScope } = {}) {
  const { db, config } = appContext(c);
  const viewer = viewerOf(auth.user, today(c));
  const query = mergeRequestListQuery(db, viewer, source, d.filters);
  const rows = await paginate(c, query, (q) => q.orderBy(`merge_requests.${d.orderBy}`, d.sort).orderBy('merge_requests.id', d.sort), options);
  const views = await mergeRequestViews(db, rows, options.project ? new Map([[options.project.row.id, options.project.row.path_with_namespace]]) : undefined);
  return c.json(views.map((view) => (d.simple ? toMergeRequestSimple(view, config) : toMergeRequestBasic(view, config))));
}

export const mergeRequestListRoutes = new Hono<AppEnv>()
  .get('/merge_requests', documented({ summary: 'List merge requests', params: listParams, auth: 'optional', responses: { 200: 'MergeRequestBasic[]' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { defaultScope: 'created_by_me' });
    // GitLab: `authenticate! unless params[:scope] == 'all'`.
    if (d.rawScope !== 'all' && !auth.user) throw unauthorized();
    // Counted up to COUNT_LIMIT, as the feeds are: past it the page has no X-Total.
    return present(c, auth, 'everywhere', d, { countLimit: COUNT_LIMIT });
  })

  .get('/projects/:id/merge_requests', documented({ summary: 'List merge requests', params: { ...listParams, ...iidsShape }, auth: 'optional', responses: { 200: 'MergeRequestBasic[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, { iids: true });
    const project = await userProject(c, auth, 'read_merge_request');
    return present(c, auth, { projectId: project.row.id }, d, { project });
  })

  .get('/groups/:id/merge_requests', documented({ summary: 'Get a list of group merge requests', params: listParams, auth: 'optional', responses: { 200: 'MergeRequestBasic[]', 404: 'Error' } }), async (c) => {
    const auth = await authenticate(c);
    const d = await declared(c, {});
    const group = await userGroup(c, auth);
    return present(c, auth, { groupId: group.row.id }, d, { countLimit: COUNT_LIMIT });
  });
