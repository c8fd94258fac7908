import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { MilestoneStatus } from '../../domain/milestones.js';
import type { MilestoneRow } from './tables.js';

export interface MilestoneFilters {
  readonly state: MilestoneStatus | 'all';
  readonly iids?: readonly number[] | undefined;
  /** Exact title (Milestone.with_title). */
  readonly title?: string | undefined;
  /** Title or description (Gitlab::SQL::Pattern: a part of either from 3 characters, the whole of it below). */
  readonly search?: string | undefined;
  readonly updatedBefore?: Date | undefined;
  readonly updatedAfter?: Date | undefined;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/**
 * GitLab's MilestonesFinder on one project; ordered as it orders them (due date first,
 * none last, then title), with the id to keep pages stable.
 */
export function milestonesQuery(db: Db, projectId: number, filters: MilestoneFilters) {
  let query = db.selectFrom('milestones').selectAll().where('project_id', '=', projectId);
  if (filters.state !== 'all') query = query.where('state', '=', filters.state);
  if (filters.iids && filters.iids.length > 0) query = query.where('iid', 'in', [...filters.iids]);
  if (filters.title !== undefined) query = query.where('title', '=', filters.title);
  if (filters.search !== undefined && filters.search !== '') {
    const term = filters.search;
    query =
      term.length >= 3
        ? query.where((eb) => eb.or([eb('title', 'ilike', `%${escapeLike(term)}%`), eb('description', 'ilike', `%${escapeLike(term)}%`)]))
        : query.where((eb) => eb.or([eb(sql`lower(title)`, '=', term.toLowerCase()), eb(sql`lower(description)`, '=', term.toLowerCase())]));
  }
  if (filters.updatedBefore) query = query.where('updated_at', '<=', filters.updatedBefore);
  if (filters.updatedAfter) query = query.where('updated_at', '>=', filters.updatedAfter);
  return query;
}

export const MILESTONE_ORDER = (q: ReturnType<typeof milestonesQuery>) => q.orderBy(sql`due_date asc nulls last`).orderBy('title').orderBy('id');

/** `user_project.milestones.find(id)`. */
export const findMilestone = (db: Db, projectId: number, id: number): Promise<MilestoneRow | undefined> =>
  db.selectFrom('milestones').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
