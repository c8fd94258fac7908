import type { Db } from '../../database/database.js';
import type { MemberSource } from './members.js';

/** Pending access requests of a source, joined with their users (select without order). */
export function accessRequestsQuery(db: Db, source: Pick<MemberSource, 'type' | 'id'>) {
  return db
    .selectFrom('access_requests as r')
    .innerJoin('users', 'users.id', 'r.user_id')
    .select(['users.id', 'users.name', 'users.username', 'users.state', 'users.avatar_url', 'users.email', 'r.requested_at'])
    .where('r.source_type', '=', source.type)
    .where('r.source_id', '=', source.id);
}

export type AccessRequestView = Awaited<ReturnType<ReturnType<typeof accessRequestsQuery>['executeTakeFirstOrThrow']>>;
