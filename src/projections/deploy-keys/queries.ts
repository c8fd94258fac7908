import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { FINGERPRINT_CLAIM } from '../../domain/deploy-keys.js';
import { authorizedProjects } from '../access.js';

/** Every key (GET /deploy_keys), filtered; the route orders and pages it. */
export const allDeployKeysQuery = (db: Db) => db.selectFrom('deploy_keys').selectAll();

/** A project's keys with their can_push (GitLab: project.deploy_keys_projects), optionally one key. */
export function projectDeployKeysQuery(db: Db, projectId: number, filter: { keyId?: number; key?: string } = {}) {
  let query = db
    .selectFrom('deploy_keys_projects as dkp')
    .innerJoin('deploy_keys as k', 'k.id', 'dkp.deploy_key_id')
    .select(['k.id', 'k.title', 'k.key', 'k.created_at', 'dkp.can_push', 'dkp.created_at as linked_at', 'dkp.updated_at as link_updated_at'])
    .where('dkp.project_id', '=', projectId);
  if (filter.keyId !== undefined) query = query.where('k.id', '=', filter.keyId);
  if (filter.key !== undefined) query = query.where('k.key', '=', filter.key);
  return query;
}

export type ProjectDeployKeyRow = Awaited<ReturnType<ReturnType<typeof projectDeployKeysQuery>['executeTakeFirstOrThrow']>>;

export async function findDeployKey(db: Db, id: number) {
  return db.selectFrom('deploy_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * GitLab's User#accessible_deploy_keys (12.x): the keys enabled in a project the user is a
 * member of (authorized_projects, any level), by id or by exact key text. GitLab 12 has no
 * public deploy keys made through the API.
 */
export async function accessibleDeployKey(db: Db, viewer: Viewer, by: { id: number } | { key: string }) {
  let query = db
    .selectFrom('deploy_keys as k')
    .select(['k.id'])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('deploy_keys_projects as dkp')
          .innerJoin('projects', 'projects.id', 'dkp.project_id')
          .select('dkp.project_id')
          .whereRef('dkp.deploy_key_id', '=', 'k.id')
          .where(authorizedProjects(viewer)),
      ),
    );
  query = 'id' in by ? query.where('k.id', '=', by.id) : query.where('k.key', '=', by.key).orderBy('k.id');
  return (await query.limit(1).executeTakeFirst())?.id;
}

/** The projects a key is enabled in, as the read tables hold them now (a deleted project's link is gone). */
export async function linkedProjectIds(db: Db, keyId: number): Promise<number[]> {
  const rows = await db.selectFrom('deploy_keys_projects').select('project_id').where('deploy_key_id', '=', keyId).execute();
  return rows.map((row) => row.project_id);
}

/** Whether some key holds the fingerprint (the claim every key takes). */
export async function fingerprintTaken(db: Db, fingerprint: string): Promise<boolean> {
  const row = await db.selectFrom('claims').select('stream_id').where('kind', '=', FINGERPRINT_CLAIM).where('key', '=', fingerprint).executeTakeFirst();
  return row !== undefined;
}
