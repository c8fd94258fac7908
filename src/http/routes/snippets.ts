import { Hono, type Context } from 'hono';
import { VISIBILITIES, type Viewer } from '../../domain/access.js';
import { forbidden, notFound, recordNotFound } from '../../domain/errors.js';
import { canCreatePersonalSnippet, canOnPersonalSnippet } from '../../domain/policy/snippet.js';
import { snippets, snippetStreamId, type SnippetLimits } from '../../domain/snippets.js';
import { create, run } from '../../commands/kernel/run.js';
import { viewerOf } from '../../projections/access.js';
import { currentSettings } from '../../projections/application-settings/queries.js';
import { anySnippet, ownSnippetsQuery, publicSnippetsQuery, snippetCreationMetadata, snippetView, visibleSnippet, type SnippetView } from '../../projections/snippets/queries.js';
import { toPersonalSnippet, toSnippet, toUserAgentDetail } from '../entities/snippets.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, today, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, RAW_TEXT, REFUSED } from '../kernel/documented.js';
import { rendersInvalid, type InvalidRendering } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { declared, optional, required, t, withDefault } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow } from '../kernel/scope.js';

/**
 * GitLab 12.10's API::Snippets: personal snippets. Every route authenticates first (`before {
 * authenticate! }`); a snippet the caller may not read is "404 Snippet Not Found".
 */

// ───────────────────────────── Shared with project snippets ─────────────────────────────

/** Rails' Array#to_sentence. */
const toSentence = (items: readonly string[]) =>
  items.length <= 2 ? items.join(' and ') : `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;

/**
 * Snippets::CreateService / UpdateService answer `render_api_error!({ error: full_messages.to_sentence }, status)`:
 * 403 for a restricted visibility (refused before validation), 400 for the model's errors.
 */
export const snippetErrors = rendersInvalid(((fields) => {
  const messages = Object.entries(fields).flatMap(([field, list]) => {
    const human = field.replace(/_/g, ' ');
    return list.map((m) => `${human.charAt(0).toUpperCase()}${human.slice(1)} ${m}`);
  });
  return { status: fields.visibility_level ? 403 : 400, body: { message: { error: toSentence(messages) } } };
}) satisfies InvalidRendering);

/** What a decision on a snippet reads of the instance and the caller. */
export async function snippetLimits(c: Context, isAdmin: boolean): Promise<SnippetLimits> {
  const settings = await currentSettings(appContext(c).db);
  return { restrictedVisibility: settings.restricted_visibility_levels as string[], isAdmin, sizeLimit: settings.snippet_size_limit as number };
}

/** GET …/raw: the content as text/plain (`env['api.format'] = :txt`), GitLab's headers. */
export function rawContent(c: Context, row: SnippetView, headers: Record<string, string> = {}) {
  return c.body(row.content, 200, { 'Content-Type': 'text/plain', ...headers });
}

/** GET …/user_agent_detail: the user agent and IP of the request that created it; none recorded is "404 UserAgentDetail Not Found". */
export async function userAgentDetail(c: Context, id: number) {
  const detail = await snippetCreationMetadata(appContext(c).db, snippetStreamId(id));
  // UserAgentDetail validates both present: a request without them recorded none.
  if (!detail?.user_agent || !detail.ip) throw notFound('UserAgentDetail');
  return c.json(toUserAgentDetail({ user_agent: detail.user_agent, ip: detail.ip }));
}

export const viewerFor = (c: Context, auth: Auth) => viewerOf(auth.user, today(c));

// ───────────────────────────── Personal snippets ─────────────────────────────

const visibility = t.values(VISIBILITIES);
const ON_SNIPPET = { pathIds: ['id'] } as const;

const createShape = {
  title: required(t.string(), { notBlank: true }),
  file_name: required(t.string()),
  content: required(t.string(), { notBlank: true }),
  description: optional(t.string()),
  visibility: withDefault(visibility, 'internal'),
};
const updateShape = {
  title: optional(t.string(), { notBlank: true }),
  file_name: optional(t.string()),
  content: optional(t.string(), { notBlank: true }),
  description: optional(t.string()),
  visibility: optional(visibility),
};

/** `snippets.find_by_id(params[:id])`: a snippet the caller may read, personal or of a project, or "404 Snippet Not Found". */
const readable = (c: Context, viewer: Viewer | null) => pathRow(c, 'id', async (db, id) => (await visibleSnippet(db, viewer, id)) ?? undefined, () => notFound('Snippet'));

/** `snippets_for_current_user.find_by_id(params[:id])`: one of the caller's own snippets, or "404 Snippet Not Found". */
const own = (c: Context, viewer: Viewer) =>
  pathRow(c, 'id', async (db, id) => {
    const row = await visibleSnippet(db, viewer, id);
    return row?.author_id === viewer.id ? row : undefined;
  }, () => notFound('Snippet'));

const present = async (c: Context, id: number) => toPersonalSnippet(await snippetView(appContext(c).db, id), appContext(c).config);

export const snippetRoutes = new Hono<AppEnv>()
  .get('/snippets', documented({ summary: "List the current user's snippets", responses: { 200: 'Snippet[]' } }), async (c) => {
    const auth = await requireUser(c);
    const { db, config } = appContext(c);
    const rows = await paginate(c, ownSnippetsQuery(db, viewerFor(c, auth)!), (q) => q.orderBy('s.id', 'desc'));
    // GitLab 12.10: `present paginate(snippets_for_current_user), with: Entities::Snippet` — no raw_url here.
    return c.json(rows.map((row) => toSnippet(row, config)));
  })

  .get('/snippets/public', documented({ summary: 'List public personal snippets', responses: { 200: 'PersonalSnippet[]' } }), async (c) => {
    await requireUser(c);
    const { db, config } = appContext(c);
    const rows = await paginate(c, publicSnippetsQuery(db), (q) => q.orderBy('s.created_at', 'desc').orderBy('s.id', 'desc'));
    return c.json(rows.map((row) => toPersonalSnippet(row, config)));
  })

  .get('/snippets/:id', documented({ summary: 'Get a snippet', ...ON_SNIPPET, responses: { 200: 'PersonalSnippet', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    return c.json(toPersonalSnippet(await readable(c, viewerFor(c, auth)), appContext(c).config));
  })

  .get('/snippets/:id/raw', documented({ summary: "A snippet's content", ...ON_SNIPPET, responses: { 200: RAW_TEXT, 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    // GitLab: served as an attachment, so a browser never renders it as a page of this origin.
    return rawContent(c, await readable(c, viewerFor(c, auth)), { 'Content-Disposition': 'attachment' });
  })

  .get('/snippets/:id/user_agent_detail', documented({ summary: "A snippet's user agent details", ...ON_SNIPPET, auth: 'admin', responses: { 200: 'UserAgentDetail', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    if (!auth.user.is_admin) throw forbidden(); // authenticated_as_admin!, after the parameters
    // `Snippet.find_by_id!`: any snippet, personal or of a project; a miss is "404 Not found".
    const snippet = await pathRow(c, 'id', (db, id) => anySnippet(db, id), () => recordNotFound('Snippet'));
    return userAgentDetail(c, snippet.id);
  })

  .post('/snippets', documented({ summary: 'Create a personal snippet', params: createShape, responses: { 201: 'PersonalSnippet', 403: 'Error' } }), snippetErrors, async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, createShape);
    const viewer = viewerFor(c, w.auth)!;
    if (!canCreatePersonalSnippet(viewer)) throw forbidden();
    const limits = await snippetLimits(c, viewer.isAdmin);
    const { id } = await create(w, snippets, () => ({
      type: 'CreateSnippet',
      projectId: null,
      authorId: viewer.id,
      title: p.title,
      fileName: p.file_name,
      content: p.content,
      description: p.description ?? null,
      visibility: p.visibility,
      ...limits,
    }));
    return c.json(await present(c, id), 201);
  })

  .put('/snippets/:id', documented({ summary: 'Update a personal snippet', params: updateShape, ...ON_SNIPPET, responses: { 200: 'PersonalSnippet', ...REFUSED } }), snippetErrors, async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, updateShape, { ...ON_SNIPPET, rules: { atLeastOneOf: [['title', 'file_name', 'content', 'visibility']] } });
    const viewer = viewerFor(c, w.auth)!;
    const snippet = await own(c, viewer);
    if (!canOnPersonalSnippet(viewer, snippet)) throw forbidden();
    const limits = await snippetLimits(c, viewer.isAdmin);
    await run(w, snippets, snippet.id, { type: 'UpdateSnippet', title: p.title, fileName: p.file_name, content: p.content, description: p.description, visibility: p.visibility, ...limits });
    return c.json(await present(c, snippet.id));
  })

  .delete('/snippets/:id', documented({ summary: 'Delete a personal snippet', ...ON_SNIPPET, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_SNIPPET);
    const viewer = viewerFor(c, w.auth)!;
    const snippet = await own(c, viewer);
    if (!canOnPersonalSnippet(viewer, snippet)) throw forbidden();
    checkUnmodifiedSince(c, snippet.updated_at);
    await run(w, snippets, snippet.id, { type: 'DeleteSnippet' });
    return c.body(null, 204);
  });
