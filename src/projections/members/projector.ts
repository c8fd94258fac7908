import type { Db } from '../../database/database.js';
import type { MemberSourceType } from '../../domain/access.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import { memberEvents, type MemberEvent } from '../../domain/members.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { UserEvent } from '../../domain/users.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

/** Deletions elsewhere that take memberships with them (handled by name: other areas' events). */
const FOREIGN_EVENT_TYPES = ['UserDeleted', 'GroupDeleted', 'ProjectDeleted'] as const;

type ForeignEvent = Extract<UserEvent | GroupEvent | ProjectEvent, { type: (typeof FOREIGN_EVENT_TYPES)[number] }>;

/**
 * Inline: the members API reads what it just wrote. An event of a members stream is applied
 * once: guarded by the stream version (members_stream_versions), which outlives the rows, so
 * a MemberAdded replayed after the MemberRemoved does not bring the member back. The other
 * areas' deletions delete by absolute conditions: replayed, they find nothing more to delete.
 */
export const membersProjector: Projector = {
  name: 'members',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(memberEvents), ...FOREIGN_EVENT_TYPES],
  tables: ['members', 'access_requests', 'members_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (MemberEvent | ForeignEvent) & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'UserDeleted':
        await trx.deleteFrom('members').where('user_id', '=', event.data.id).execute();
        await trx.deleteFrom('access_requests').where('user_id', '=', event.data.id).execute();
        return;
      case 'GroupDeleted':
      case 'ProjectDeleted': {
        const sourceType: MemberSourceType = event.type === 'GroupDeleted' ? 'Namespace' : 'Project';
        await trx.deleteFrom('members').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
        await trx.deleteFrom('access_requests').where('source_type', '=', sourceType).where('source_id', '=', event.data.id).execute();
        return;
      }
    }
    if (!(await claimStreamVersion(trx, 'members_stream_versions', stored))) return;
    const { source_type, source_id, user_id } = event.data;
    const ofMember = <Q extends { where: (...args: any[]) => any }>(q: Q): Q =>
      q.where('source_type', '=', source_type).where('source_id', '=', source_id).where('user_id', '=', user_id) as Q;
    const dropRequest = () => ofMember(trx.deleteFrom('access_requests')).execute();
    switch (event.type) {
      case 'MemberAdded':
      case 'AccessRequestApproved': {
        const d = event.data;
        const createdBy = event.type === 'MemberAdded' ? event.data.created_by_id : event.data.approved_by_id;
        await dropRequest();
        await trx
          .insertInto('members')
          .values({ source_type, source_id, user_id, access_level: d.access_level, expires_at: d.expires_at, created_by_id: createdBy, created_at: at, updated_at: at })
          .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
          .execute();
        return;
      }
      case 'MemberUpdated':
        await ofMember(trx.updateTable('members').set({ access_level: event.data.access_level, expires_at: event.data.expires_at, updated_at: at })).execute();
        return;
      case 'MemberRemoved':
        await ofMember(trx.deleteFrom('members')).execute();
        return;
      case 'AccessRequested':
        await trx
          .insertInto('access_requests')
          .values({ source_type, source_id, user_id, requested_at: at })
          .onConflict((oc) => oc.columns(['source_type', 'source_id', 'user_id']).doNothing())
          .execute();
        return;
      case 'AccessRequestDenied':
        await dropRequest();
        return;
      default:
        return unhandled(event);
    }
  },
};
