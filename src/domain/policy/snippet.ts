import type { Viewer, Visibility } from '../access.js';
import { can } from './can.js';
import type { ProjectSubject } from './project.js';

/**
 * GitLab 12.10's PersonalSnippetPolicy and ProjectSnippetPolicy for what is asked of one
 * snippet the caller can already read (reading is the finder's: src/projections/snippets/queries.ts).
 */

export type SnippetAbility = 'update_snippet' | 'admin_snippet';

export interface PolicySnippet {
  readonly author_id: number;
  readonly visibility: Visibility;
}

/** GlobalPolicy: any signed-in user but an external one creates personal snippets. */
export const canCreatePersonalSnippet = (viewer: Viewer | null) => viewer !== null && !viewer.external;

/** PersonalSnippetPolicy: the author and administrators update and administer. */
export const canOnPersonalSnippet = (viewer: Viewer | null, snippet: PolicySnippet) => viewer !== null && (viewer.isAdmin || viewer.id === snippet.author_id);

/**
 * ProjectSnippetPolicy: the project's maintainers (ProjectPolicy) or the author or an
 * administrator; never another's internal snippet unless administrator
 * (`internal_snippet & ~is_author & ~admin` prevents both); an author below reporter does not
 * administer (delete) their own. The project's archive and feature rules still hold.
 */
export function canOnProjectSnippet(project: ProjectSubject, snippet: PolicySnippet, ability: SnippetAbility): boolean {
  const viewer = project.viewer;
  if (!viewer) return false;
  const admin = viewer.isAdmin;
  const author = viewer.id === snippet.author_id;
  const writable = !project.project.archived && project.project.settings.snippets_access_level !== 'disabled';
  if (!writable) return false;
  if (snippet.visibility === 'internal' && !author && !admin) return false;
  if (ability === 'admin_snippet' && author && !admin && !can(project, 'create_snippet')) return false;
  return admin || author || can(project, ability);
}
