import { Hono, type Context } from 'hono';
import { createTag, deleteTag, saveTagRelease } from '../../commands/repository-tags.js';
import { forbidden, notFound, recordNotFound, unprocessable } from '../../domain/errors.js';
import { isProtected } from '../../domain/repository/push-access.js';
import { NAME_TAKEN, PROTECTED_TAG_LEVELS, protectedTags } from '../../domain/protected-tags.js';
import { HUMAN_ACCESS_LEVELS } from '../../domain/protected-branches.js';
import { findProtectedTag, createAccessLevelsOf, protectedTagRefsOf, protectedTagsQuery } from '../../projections/protected-tags/queries.js';
import type { ProtectedTagRow } from '../../projections/protected-tags/tables.js';
import { findCommits } from '../../projections/repository/queries.js';
import { findTag, listTags, listTagsWithCommitTime } from '../../projections/repository/tags.js';
import type { RepositoryTagRow } from '../../projections/repository/tables.js';
import { newId, run } from '../../commands/kernel/run.js';
import { projectWebUrl } from '../entities/projects.js';
import { toTag, toTagRelease } from '../entities/repository.js';
import { authenticate, requireWriter, writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { fullMessages, rendersInvalid } from '../kernel/errors.js';
import { paginate, paginateArray } from '../kernel/pagination.js';
import { optional, params, required, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { userProject, type ProjectScope } from '../kernel/scope.js';
import { refWriter } from './repository-access.js';

/**
 * GitLab 12's API::Tags (with the legacy tag releases) and API::ProtectedTags. Tags are read
 * by whoever may download the code (`before { authorize! :download_code }`) and written by
 * who may `admin_tag` (developers and up), through the tag check (protected tags); protected
 * tags are the maintainers' (`before { authorize_admin_project }`).
 */

/**
 * VersionSorter's order: digits compared as numbers, everything else as text, so v1.10
 * follows v1.9.
 */
function versionCompare(a: string, b: string): number {
  const parts = (s: string) => s.match(/\d+|\D+/g) ?? [];
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i]!, y[i]!];
    const numeric = /^\d/.test(p) && /^\d/.test(q);
    const order = numeric ? Number(p) - Number(q) || p.length - q.length : p < q ? -1 : p > q ? 1 : 0;
    if (order !== 0) return order;
  }
  return x.length - y.length;
}

/** TagsFinder#by_search: `^prefix`, `suffix$`, or anywhere; case-insensitive (both sides upcased). */
function searchMatches(search: string | undefined): (name: string) => boolean {
  if (!search) return () => true;
  if (search.startsWith('^')) return (name) => name.toUpperCase().startsWith(search.slice(1).toUpperCase());
  if (search.endsWith('$')) return (name) => name.toUpperCase().endsWith(search.slice(0, -1).toUpperCase());
  return (name) => name.toUpperCase().includes(search.toUpperCase());
}

async function presentTags(c: Context, project: ProjectScope, tags: readonly RepositoryTagRow[]) {
  const { db, config } = appContext(c);
  const commits = new Map((await findCommits(db, project.row.id, tags.map((t) => t.commit_sha))).map((commit) => [commit.sha, commit]));
  const protectedRefs = await protectedTagRefsOf(db, project.row.id);
  const webUrl = projectWebUrl(config, project.row.path_with_namespace);
  return tags.map((tag) => toTag(tag, commits.get(tag.commit_sha)!, webUrl, isProtected(protectedRefs, tag.name)));
}

/** The tag the path names, or 404 `Tag Not Found`. */
async function tagOf(c: Context, project: ProjectScope): Promise<RepositoryTagRow> {
  const tag = await findTag(appContext(c).db, project.row.id, c.req.param('tag_name') ?? '');
  if (!tag) throw notFound('Tag');
  return tag;
}

/** `authorize! ability`: 403 for who sees the project without it. */
function authorize(project: ProjectScope, ability: 'admin_tag' | 'create_release' | 'update_release') {
  if (!project.can(ability)) throw forbidden();
}

const listParams = {
  order_by: withDefault(t.values(['name', 'updated']), 'updated'),
  sort: withDefault(t.values(['asc', 'desc']), 'desc'),
  search: optional(t.string()),
} satisfies Shape;
const createTagShape = { tag_name: required(t.string()), ref: required(t.string()), message: optional(t.string()), release_description: optional(t.string()) } satisfies Shape;
const releaseShape = { description: required(t.string()) } satisfies Shape;
/** Entities::TagRelease. */
const TAG_RELEASE = { type: 'object', properties: { tag_name: { type: 'string' }, description: { type: 'string' } } } as const;

export const repositoryTagRoutes = new Hono<AppEnv>()
  .get('/projects/:id/repository/tags', documented({ summary: 'Get a project repository tags', params: listParams, auth: 'optional', responses: { 200: 'Tag[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const project = await userProject(c, auth, 'download_code');
    const p = await params(c, listParams);
    const { db } = appContext(c);
    const matches = searchMatches(p.search);
    const sorted =
      p.order_by === 'name'
        ? (await listTags(db, project.row.id)).filter((tag) => matches(tag.name)).sort((a, b) => versionCompare(a.name, b.name))
        : // Repository#tags_sorted_by_committed_date: by the tagged commit's committer date (then name, to be stable).
          (await listTagsWithCommitTime(db, project.row.id)).filter((tag) => matches(tag.name)).sort((a, b) => a.committer_time - b.committer_time || versionCompare(a.name, b.name));
    if (p.sort === 'desc') sorted.reverse();
    return c.json(await presentTags(c, project, await paginateArray(c, sorted)));
  })

  .get('/projects/:id/repository/tags/:tag_name', documented({ summary: 'Get a single repository tag', auth: 'optional', responses: { 200: 'Tag', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const project = await userProject(c, auth, 'download_code');
    return c.json((await presentTags(c, project, [await tagOf(c, project)]))[0]);
  })

  .post('/projects/:id/repository/tags', documented({ summary: 'Create a new repository tag', params: createTagShape, responses: { 201: 'Tag', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'download_code');
    const p = await params(c, createTagShape);
    authorize(project, 'admin_tag');
    await createTag(w, { projectId: project.row.id, tag: p.tag_name, ref: p.ref, message: p.message, releaseDescription: p.release_description, writer: refWriter(c, project)! });
    const tag = (await findTag(appContext(c).db, project.row.id, p.tag_name))!;
    return c.json((await presentTags(c, project, [tag]))[0], 201);
  })

  .delete('/projects/:id/repository/tags/:tag_name', documented({ summary: 'Delete a repository tag', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'download_code');
    authorize(project, 'admin_tag');
    const tag = await tagOf(c, project);
    // destroy_conditionally!(commit, last_updated: commit.authored_date).
    const [commit] = await findCommits(appContext(c).db, project.row.id, [tag.commit_sha]);
    checkUnmodifiedSince(c, new Date(commit!.author.time * 1000));
    await deleteTag(w, project.row.id, tag.name, refWriter(c, project)!);
    return c.body(null, 204);
  })

  // The legacy tag release (GitLab 12: deprecated, still served).
  .post('/projects/:id/repository/tags/:tag_name/release', documented({ summary: 'Add a release note to a tag', params: releaseShape, responses: { 201: TAG_RELEASE, ...REFUSED, 409: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'download_code');
    const p = await params(c, releaseShape);
    authorize(project, 'create_release');
    const tag = await tagOf(c, project);
    await saveTagRelease(w, project.row.id, { tag: tag.name, description: p.description, create: true });
    return c.json(toTagRelease(tag.name, p.description), 201);
  })

  .put('/projects/:id/repository/tags/:tag_name/release', documented({ summary: "Update a tag's release note", params: releaseShape, responses: { 200: TAG_RELEASE, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'download_code');
    const p = await params(c, releaseShape);
    authorize(project, 'update_release');
    const tag = await tagOf(c, project);
    await saveTagRelease(w, project.row.id, { tag: tag.name, description: p.description, create: false });
    return c.json(toTagRelease(tag.name, p.description));
  });

// ───────────────────────────── Protected tags ─────────────────────────────

async function adminProject(c: Context) {
  const auth = await authenticate(c);
  return { auth, project: await userProject(c, auth, 'admin_project') };
}

/** Entities::ProtectedTag: name and create_access_levels (Entities::ProtectedRefAccess). */
async function presentProtectedTags(c: Context, rows: readonly ProtectedTagRow[]) {
  const levels = await createAccessLevelsOf(appContext(c).db, rows.map((row) => row.id));
  return rows.map((row) => ({
    name: row.name,
    create_access_levels: levels
      .filter((level) => level.protected_tag_id === row.id)
      .map((level) => ({ access_level: level.access_level, access_level_description: HUMAN_ACCESS_LEVELS[level.access_level] ?? null })),
  }));
}

async function protectedTagOf(c: Context, project: ProjectScope): Promise<ProtectedTagRow> {
  const row = await findProtectedTag(appContext(c).db, project.row.id, c.req.param('name') ?? '');
  // find_by!: ActiveRecord::RecordNotFound.
  if (!row) throw recordNotFound();
  return row;
}

const protectShape = { name: required(t.ref()), create_access_level: withDefault(t.integerValues(PROTECTED_TAG_LEVELS), 40) } satisfies Shape;

export const protectedTagRoutes = new Hono<AppEnv>()
  .get('/projects/:id/protected_tags', documented({ summary: "Get a project's protected tags", responses: { 200: 'ProtectedTag[]', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    const rows = await paginate(c, protectedTagsQuery(appContext(c).db, project.row.id), (q) => q.orderBy('id'));
    return c.json(await presentProtectedTags(c, rows));
  })

  .get('/projects/:id/protected_tags/:name', documented({ summary: 'Get a single protected tag', responses: { 200: 'ProtectedTag', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    return c.json((await presentProtectedTags(c, [await protectedTagOf(c, project)]))[0]);
  })

  .post('/projects/:id/protected_tags', documented({ summary: 'Protect a single tag or wildcard', params: protectShape, responses: { 201: 'ProtectedTag', ...REFUSED, 422: 'Error' } }), rendersInvalid(fullMessages(422)), async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const p = await params(c, protectShape);
    const { db } = appContext(c);
    if (await findProtectedTag(db, project.row.id, p.name)) throw unprocessable([NAME_TAKEN]);
    const id = await newId(w, protectedTags);
    await run(w, protectedTags, id, { type: 'ProtectTag', projectId: project.row.id, name: p.name, createAccessLevel: p.create_access_level });
    return c.json((await presentProtectedTags(c, [(await findProtectedTag(db, project.row.id, p.name))!]))[0], 201);
  })

  .delete('/projects/:id/protected_tags/:name', documented({ summary: 'Unprotect a single tag', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const row = await protectedTagOf(c, project);
    checkUnmodifiedSince(c, new Date(row.updated_at));
    await run(w, protectedTags, row.id, { type: 'UnprotectTag' });
    return c.body(null, 204);
  });
