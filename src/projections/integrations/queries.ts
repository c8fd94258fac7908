import type { Db } from '../../database/database.js';
import type { IntegrationRow } from './tables.js';

/** A project's integration of one kind, if it was ever saved. */
export const findIntegration = (db: Db, projectId: number, kind: string): Promise<IntegrationRow | undefined> =>
  db.selectFrom('integrations').selectAll().where('project_id', '=', projectId).where('kind', '=', kind).executeTakeFirst();

/** `project.services.active`, by id. */
export const activeIntegrations = (db: Db, projectId: number): Promise<IntegrationRow[]> =>
  db.selectFrom('integrations').selectAll().where('project_id', '=', projectId).where('active', '=', true).orderBy('id').execute();
