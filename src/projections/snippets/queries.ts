import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import { ACCESS, VISIBILITIES, visibleWithoutMembership, type Viewer, type Visibility } from '../../domain/access.js';
import { authorizedProjects } from '../access.js';
import { featureAvailableTo, projectReadableBy } from '../projects/queries.js';

/**
 * The reads of the snippets API, and the one rule of who sees a snippet (docs/snippets.md):
 * GitLab 12.10's SnippetsFinder with PersonalSnippetPolicy and ProjectSnippetPolicy.
 */

/** Gitlab::VisibilityLevel.levels_for_user: everything for administrators, public and internal for users, public for external users and anonymous. */
export const snippetLevelsFor = (viewer: Viewer | null): readonly Visibility[] => (viewer?.isAdmin ? VISIBILITIES : visibleWithoutMembership(viewer));

/** A snippet's level is one the viewer sees, or the viewer wrote it (Snippet.visible_to_or_authored_by). */
function levelOrAuthor(viewer: Viewer | null): Expression<SqlBool> {
  const levels = sql<SqlBool>`s.visibility in (${sql.join([...snippetLevelsFor(viewer)])})`;
  return viewer ? sql<SqlBool>`(${levels} or s.author_id = ${viewer.id})` : levels;
}

/**
 * The snippets (rows of `s`) the viewer may read. A personal snippet by its level or author; a
 * project snippet when the project is visible to the viewer with its snippets feature available
 * to them, and then any snippet for a member (guest and up), else by its level or author
 * (Snippet.for_project_with_user).
 */
export function snippetReadableBy(viewer: Viewer | null): Expression<SqlBool> {
  const member = viewer ? authorizedProjects(viewer, ACCESS.GUEST, 'p') : sql<SqlBool>`false`;
  return sql<SqlBool>`(case when s.project_id is null then ${levelOrAuthor(viewer)}
    else exists (select 1 from projects p where p.id = s.project_id and not p.pending_delete
      and ${projectReadableBy(viewer, 'p')} and ${featureAvailableTo(viewer, 'snippets', 'p')}
      and (${member} or ${levelOrAuthor(viewer)})) end)`;
}

/** A snippet with what its entity shows beyond its row: the author and the project's path. */
function withAuthorAndPath(db: Db) {
  return db
    .selectFrom('snippets as s')
    .innerJoin('users as u', 'u.id', 's.author_id')
    .leftJoin('projects as pp', 'pp.id', 's.project_id')
    .selectAll('s')
    .select(['u.name as author_name', 'u.username as author_username', 'u.state as author_state', 'u.avatar_url as author_avatar_url', 'u.email as author_email'])
    .select('pp.path_with_namespace');
}

export type SnippetView = Awaited<ReturnType<ReturnType<typeof withAuthorAndPath>['executeTakeFirstOrThrow']>>;

/**
 * The finder function of a snippet for a noteable (notes, discussions, award emoji): the
 * snippet `id` when the viewer may read it, else null (GitLab answers such a snippet 404).
 * `projectId`: the project the path names (a project snippet route), null for /snippets/:id,
 * which reaches every snippet the viewer may read, personal or of a project.
 */
export async function visibleSnippet(db: Db, viewer: Viewer | null, id: number, projectId: number | null = null): Promise<SnippetView | null> {
  let query = withAuthorAndPath(db).where('s.id', '=', id).where(snippetReadableBy(viewer));
  if (projectId !== null) query = query.where('s.project_id', '=', projectId);
  return (await query.executeTakeFirst()) ?? null;
}

/** A snippet just written, as its entity shows it (whoever may see it: the writer could). */
export const snippetView = (db: Db, id: number): Promise<SnippetView> => withAuthorAndPath(db).where('s.id', '=', id).executeTakeFirstOrThrow();

/** GET /snippets: the viewer's own snippets, personal and in projects they may read (SnippetsFinder with author: current_user), newest id first. */
export const ownSnippetsQuery = (db: Db, viewer: Viewer) => withAuthorAndPath(db).where('s.author_id', '=', viewer.id).where(snippetReadableBy(viewer));

/** GET /snippets/public: every public personal snippet (Snippet.only_personal_snippets.are_public.fresh). */
export const publicSnippetsQuery = (db: Db) => withAuthorAndPath(db).where('s.project_id', 'is', null).where('s.visibility', '=', 'public');

/** GET /projects/:id/snippets: a project's snippets the viewer may read (the caller has checked the project and its feature). */
export const projectSnippetsQuery = (db: Db, viewer: Viewer | null, projectId: number) =>
  withAuthorAndPath(db).where('s.project_id', '=', projectId).where(snippetReadableBy(viewer));

/** Any snippet by id (user_agent_detail: `Snippet.find_by_id!`, for administrators), of one project when given. */
export const anySnippet = (db: Db, id: number, projectId?: number) => {
  let query = db.selectFrom('snippets').select(['id', 'project_id']).where('id', '=', id);
  if (projectId !== undefined) query = query.where('project_id', '=', projectId);
  return query.executeTakeFirst();
};

/** The metadata of the request that created the snippet: its user agent and IP (GitLab's UserAgentDetail). */
export async function snippetCreationMetadata(db: Db, streamId: string): Promise<{ user_agent: string | null; ip: string | null } | undefined> {
  const row = await db
    .selectFrom('events')
    .select([sql<string | null>`metadata->>'user_agent'`.as('user_agent'), sql<string | null>`metadata->>'ip'`.as('ip')])
    .where('stream_id', '=', streamId)
    .where('event_type', '=', 'SnippetCreated')
    .executeTakeFirst();
  return row;
}
