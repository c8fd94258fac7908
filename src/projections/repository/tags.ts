import type { Db } from '../../database/database.js';
import type { RepositoryTagRow } from './tables.js';

/** A project's tags, as the repository projection keeps them (src/projections/repository/projector.ts). */

export const listTags = (db: Db, projectId: number): Promise<RepositoryTagRow[]> =>
  db.selectFrom('repository_tags').selectAll().where('project_id', '=', projectId).orderBy('name').execute();

export const findTag = (db: Db, projectId: number, name: string): Promise<RepositoryTagRow | undefined> =>
  db.selectFrom('repository_tags').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
