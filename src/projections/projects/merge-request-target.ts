import type { Db } from '../../database/database.js';
import { VISIBILITY_LEVEL, type Visibility } from '../../domain/access.js';

/**
 * Project#default_merge_request_target (GitLab 12.10): a fork's upstream when it has one whose
 * merge requests are enabled and that is not less private than the fork (a private fork of a
 * public project targets itself), else the project itself. Where `git push -o
 * merge_request.create` opens its merge request (PushOptionsHandlerService).
 */
export async function defaultMergeRequestTarget(db: Db, project: { readonly id: number; readonly forked_from_project_id: number | null; readonly visibility: Visibility }): Promise<number> {
  if (project.forked_from_project_id === null) return project.id;
  const upstream = await db
    .selectFrom('projects')
    .select(['id', 'merge_requests_enabled', 'visibility'])
    .where('id', '=', project.forked_from_project_id)
    .where('pending_delete', '=', false)
    .executeTakeFirst();
  if (!upstream || !upstream.merge_requests_enabled) return project.id;
  return VISIBILITY_LEVEL[project.visibility] < VISIBILITY_LEVEL[upstream.visibility] ? project.id : upstream.id;
}
