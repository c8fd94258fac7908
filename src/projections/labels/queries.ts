import type { Db } from '../../database/database.js';
import type { LabelRow } from './tables.js';

/** A project's labels (LabelsFinder), ordered by title as GitLab's default scope orders them. */
export const labelsQuery = (db: Db, projectId: number) => db.selectFrom('labels').selectAll().where('project_id', '=', projectId);

/** `labels.find_by_title(title)`. */
export const findLabelByTitle = (db: Db, projectId: number, title: string): Promise<LabelRow | undefined> =>
  labelsQuery(db, projectId).where('title', '=', title).executeTakeFirst();

/** find_label: by id when the text is one, else by title (exact). */
export async function findLabel(db: Db, projectId: number, idOrTitle: string | number): Promise<LabelRow | undefined> {
  const asId = typeof idOrTitle === 'number' ? idOrTitle : /^\d{1,9}$/.test(idOrTitle) ? Number(idOrTitle) : null;
  if (asId !== null) {
    const byId = await labelsQuery(db, projectId).where('id', '=', asId).executeTakeFirst();
    if (byId || typeof idOrTitle === 'number') return byId;
  }
  return findLabelByTitle(db, projectId, String(idOrTitle));
}
