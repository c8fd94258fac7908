import type { Db } from '../../database.js';
import type { RepositoryBranchRow, RepositoryObjectsTable } from './tables.js';

export async function listBranches(db: Db, projectId: number): Promise<RepositoryBranchRow[]> {
  return db.selectFrom('repository_branches').selectAll().where('project_id', '=', projectId).orderBy('name').execute();
}

export async function findBranch(db: Db, projectId: number, name: string): Promise<RepositoryBranchRow | undefined> {
  return db.selectFrom('repository_branches').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export async function findObject(db: Db, projectId: number, sha: string): Promise<Pick<RepositoryObjectsTable, 'sha' | 'type' | 'content'> | undefined> {
  const row = await db.selectFrom('repository_objects').select(['sha', 'type', 'content']).where('project_id', '=', projectId).where('sha', '=', sha).executeTakeFirst();
  return row && { ...row, content: new Uint8Array(row.content) };
}
