import type { Db } from '../../database/database.js';
import type { MemberSourceType } from '../../domain/access.js';
import { defineProjector, type Projected } from '../projector.js';

/** The rows of one user in one group or project. */
interface MemberRef {
  readonly source_type: MemberSourceType;
  readonly source_id: number;
  readonly user_id: number;
}

const ofMember = <Q extends { where: (...args: any[]) => any }>(q: Q, { source_type, source_id, user_id }: MemberRef): Q =>
  q.where('source_type', '=', source_type).where('source_id', '=', source_id).where('user_id', '=', user_id) as Q;

const dropRequest = (trx: Db, member: MemberRef) => ofMember(trx.deleteFrom('access_requests'), member).execute();

/** A member added directly or by approving their request: the request goes, the member comes. */
async function addMember(event: Projected<'MemberAdded' | 'AccessRequestApproved'>, trx: Db) {
  const d = event.data;
  const at = event.occurredAt.toISOString();
  const createdBy = event.type === 'MemberAdded' ? event.data.created_by_id : event.data.approved_by_id;
  await dropRequest(trx, d);
  await trx
    .insertInto('members')
    .values({ source_type: d.source_type, source_id: d.source_id, user_id: d.user_id, access_level: d.access_level, expires_at: d.expires_at, created_by_id: createdBy, created_at: at, updated_at: at })
    .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
    .execute();
}

/** A group's or project's deletion takes its members and access requests with it. */
async function deleteOfSource(event: Projected<'GroupDeleted' | 'ProjectDeleted'>, trx: Db) {
  const sourceType: MemberSourceType = event.type === 'GroupDeleted' ? 'Namespace' : 'Project';
  await trx.deleteFrom('members').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
  await trx.deleteFrom('access_requests').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
}

/**
 * Inline: the members API reads what it just wrote. An event of a members stream is applied
 * once: the kernel's guard by stream version (members_stream_versions) outlives the rows, so
 * a MemberAdded replayed after the MemberRemoved does not bring the member back. The other
 * areas' deletions delete by absolute conditions: replayed, they find nothing more to delete.
 */
export const membersProjector = defineProjector({
  name: 'members',
  tables: ['members', 'access_requests'],
  on: {
    MemberAdded: addMember,
    AccessRequestApproved: addMember,
    MemberUpdated: async ({ data, occurredAt }, trx) =>
      ofMember(trx.updateTable('members').set({ access_level: data.access_level, expires_at: data.expires_at, updated_at: occurredAt.toISOString() }), data).execute(),
    MemberRemoved: async ({ data }, trx) => ofMember(trx.deleteFrom('members'), data).execute(),
    AccessRequested: async ({ data, occurredAt }, trx) =>
      trx
        .insertInto('access_requests')
        .values({ source_type: data.source_type, source_id: data.source_id, user_id: data.user_id, requested_at: occurredAt.toISOString() })
        .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
        .execute(),
    AccessRequestDenied: async ({ data }, trx) => dropRequest(trx, data),
  },
  cascades: {
    UserDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('members').where('user_id', '=', data.id).execute();
      await trx.deleteFrom('access_requests').where('user_id', '=', data.id).execute();
    },
    GroupDeleted: deleteOfSource,
    ProjectDeleted: deleteOfSource,
  },
});
