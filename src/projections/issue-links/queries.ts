import type { Db } from '../../database/database.js';
import type { IssueRow } from '../issues/tables.js';
import type { IssueLinkRow } from './tables.js';

/** `IssueLink.find(id)`. */
export const findIssueLink = (db: Db, id: number): Promise<IssueLinkRow | undefined> => db.selectFrom('issue_links').selectAll().where('id', '=', id).executeTakeFirst();

/** The link between two issues, whichever way round. */
export const linkBetween = (db: Db, a: number, b: number): Promise<IssueLinkRow | undefined> =>
  db
    .selectFrom('issue_links')
    .selectAll()
    .where((eb) => eb.or([eb.and([eb('source_id', '=', a), eb('target_id', '=', b)]), eb.and([eb('source_id', '=', b), eb('target_id', '=', a)])]))
    .executeTakeFirst();

/**
 * EE's Issue#related_issues before the readers' filter: the issues linked to one either way,
 * each with its link's id, ordered by it (`reorder('issue_link_id')`).
 */
export async function relatedIssues(db: Db, issueId: number): Promise<{ row: IssueRow; issueLinkId: number }[]> {
  const links = await db
    .selectFrom('issue_links')
    .select(['id', 'source_id', 'target_id'])
    .where((eb) => eb.or([eb('source_id', '=', issueId), eb('target_id', '=', issueId)]))
    .orderBy('id')
    .execute();
  if (links.length === 0) return [];
  const others = links.map((link) => (link.source_id === issueId ? link.target_id : link.source_id));
  const rows = new Map((await db.selectFrom('issues').selectAll().where('id', 'in', others).execute()).map((row) => [row.id, row]));
  return links.flatMap((link, i) => {
    const row = rows.get(others[i]!);
    return row ? [{ row, issueLinkId: link.id }] : [];
  });
}
