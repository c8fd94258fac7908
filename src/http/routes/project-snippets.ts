import { Hono, type Context } from 'hono';
import { VISIBILITIES } from '../../domain/access.js';
import { forbidden, notFound, recordNotFound } from '../../domain/errors.js';
import { canOnProjectSnippet } from '../../domain/policy/snippet.js';
import { snippets } from '../../domain/snippets.js';
import { create, run } from '../../commands/kernel/run.js';
import { anySnippet, projectSnippetsQuery, snippetView, visibleSnippet } from '../../projections/snippets/queries.js';
import { toSnippet } from '../entities/snippets.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, RAW_TEXT, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declared, optional, pathId, required, t } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow, userProject, type ProjectScope } from '../kernel/scope.js';
import { rawContent, snippetErrors, snippetLimits, userAgentDetail } from './snippets.js';

/**
 * GitLab 12.10's API::ProjectSnippets. Every route authenticates first; the project is
 * `user_project` (404 when hidden); its snippets are those SnippetsFinder gives the caller —
 * none while the snippets feature is not available to them.
 */

const visibility = t.values(VISIBILITIES);
const ON_SNIPPET = { pathIds: ['snippet_id'] } as const;

/** `code` is 12.x's deprecated name of `content`; one of them at most. */
const createShape = {
  title: required(t.string(), { notBlank: true }),
  file_name: required(t.string()),
  code: optional(t.string(), { notBlank: true }),
  content: optional(t.string(), { notBlank: true }),
  description: optional(t.string()),
  visibility: required(visibility),
};
const updateShape = {
  title: optional(t.string(), { notBlank: true }),
  file_name: optional(t.string()),
  code: optional(t.string(), { notBlank: true }),
  content: optional(t.string(), { notBlank: true }),
  description: optional(t.string()),
  visibility: optional(visibility),
};
const CODE_OR_CONTENT = { mutuallyExclusive: [['code', 'content']] } as const;
// GitLab 12.10 names `visibility_level` here, a parameter the route does not declare: a change
// of visibility alone is refused as GitLab refuses it.
const UPDATE_RULES = { ...CODE_OR_CONTENT, atLeastOneOf: [['title', 'file_name', 'code', 'content', 'visibility_level']] } as const;

/** The snippet `:snippet_id` of the project as SnippetsFinder gives it to the caller (none while the feature is not theirs), or `missing`. */
const snippetOf = (c: Context, project: ProjectScope, missing: () => Error) =>
  pathRow(c, 'snippet_id', async (db, id) => (await visibleSnippet(db, project.viewer, id, project.row.id)) ?? undefined, missing);

const present = async (c: Context, id: number) => toSnippet(await snippetView(appContext(c).db, id), appContext(c).config);

export const projectSnippetRoutes = new Hono<AppEnv>()
  .get('/projects/:id/snippets', documented({ summary: 'List project snippets', responses: { 200: 'ProjectSnippet[]', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    const project = await userProject(c, auth);
    const { db, config } = appContext(c);
    const rows = await paginate(c, projectSnippetsQuery(db, project.viewer, project.row.id), (q) => q.orderBy('s.id', 'desc'));
    return c.json(rows.map((row) => toSnippet(row, config)));
  })

  .get('/projects/:id/snippets/:snippet_id', documented({ summary: 'Get a project snippet', ...ON_SNIPPET, responses: { 200: 'ProjectSnippet', 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    const project = await userProject(c, auth);
    // `snippets_for_current_user.find(id)`: a miss is ActiveRecord's "404 Not found".
    return c.json(toSnippet(await snippetOf(c, project, () => recordNotFound('Snippet')), appContext(c).config));
  })

  .get('/projects/:id/snippets/:snippet_id/raw', documented({ summary: "A project snippet's content", ...ON_SNIPPET, responses: { 200: RAW_TEXT, 404: 'Error' } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    const project = await userProject(c, auth);
    return rawContent(c, await snippetOf(c, project, () => notFound('Snippet')));
  })

  .get('/projects/:id/snippets/:snippet_id/user_agent_detail', documented({ summary: "A project snippet's user agent details", ...ON_SNIPPET, auth: 'admin', responses: { 200: 'UserAgentDetail', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    await declared(c, {}, ON_SNIPPET);
    if (!auth.user.is_admin) throw forbidden();
    // `Snippet.find_by!(id:, project_id: params[:id])`: the id as given (a path names none), a miss "404 Not found".
    const projectId = pathId(c, 'id');
    const snippet = await pathRow(c, 'snippet_id', async (db, id) => (projectId === null ? undefined : anySnippet(db, id, projectId)), () => recordNotFound('Snippet'));
    return userAgentDetail(c, snippet.id);
  })

  .post('/projects/:id/snippets', documented({ summary: 'Create a project snippet', params: createShape, responses: { 201: 'ProjectSnippet', ...REFUSED } }), snippetErrors, async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, createShape, { rules: CODE_OR_CONTENT });
    const project = await userProject(c, w.auth, 'create_snippet');
    const limits = await snippetLimits(c, w.auth.user.is_admin);
    const { id } = await create(w, snippets, () => ({
      type: 'CreateSnippet',
      projectId: project.row.id,
      authorId: w.auth.user.id,
      title: p.title,
      fileName: p.file_name,
      content: p.content ?? p.code ?? '',
      description: p.description ?? null,
      visibility: p.visibility,
      ...limits,
    }));
    return c.json(await present(c, id), 201);
  })

  .put('/projects/:id/snippets/:snippet_id', documented({ summary: 'Update a project snippet', params: updateShape, ...ON_SNIPPET, responses: { 200: 'ProjectSnippet', ...REFUSED } }), snippetErrors, async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, updateShape, { ...ON_SNIPPET, rules: UPDATE_RULES });
    const project = await userProject(c, w.auth);
    const snippet = await snippetOf(c, project, () => notFound('Snippet'));
    if (!canOnProjectSnippet(project.subject, snippet, 'update_snippet')) throw forbidden();
    const limits = await snippetLimits(c, w.auth.user.is_admin);
    const content = p.content ?? p.code;
    await run(w, snippets, snippet.id, { type: 'UpdateSnippet', title: p.title, fileName: p.file_name, content, description: p.description, visibility: p.visibility, ...limits });
    return c.json(await present(c, snippet.id));
  })

  .delete('/projects/:id/snippets/:snippet_id', documented({ summary: 'Delete a project snippet', ...ON_SNIPPET, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_SNIPPET);
    const project = await userProject(c, w.auth);
    const snippet = await snippetOf(c, project, () => notFound('Snippet'));
    if (!canOnProjectSnippet(project.subject, snippet, 'admin_snippet')) throw forbidden();
    checkUnmodifiedSince(c, snippet.updated_at);
    await run(w, snippets, snippet.id, { type: 'DeleteSnippet' });
    return c.body(null, 204);
  });
