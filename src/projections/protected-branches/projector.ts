import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import { ACCESS_KINDS, protectedBranchEvents, type ProtectedBranchEvent } from '../../domain/protected-branches.js';
import type { UserEvent } from '../../domain/users.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

/** Deletions elsewhere that take protected branches or their rules with them (other areas' events). */
const FOREIGN_EVENT_TYPES = ['ProjectDeleted', 'UserDeleted', 'GroupDeleted'] as const;

type ForeignEvent = Extract<ProjectEvent | UserEvent | GroupEvent, { type: (typeof FOREIGN_EVENT_TYPES)[number] }>;

/**
 * Inline: the API reads what it just wrote. A protected branch's own events are applied once
 * (protected_branches_stream_versions); a project's deletion removes its protected branches,
 * a user's or group's deletion the rules naming them (GitLab's foreign keys cascade), by
 * absolute conditions.
 */
export const protectedBranchesProjector: Projector = {
  name: 'protected_branches',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(protectedBranchEvents), ...FOREIGN_EVENT_TYPES],
  tables: ['protected_branches', 'protected_branch_access_levels', 'protected_branches_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (ProtectedBranchEvent | ForeignEvent) & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'ProjectDeleted': {
        const ofProject = trx.selectFrom('protected_branches').select('id').where('project_id', '=', event.data.id);
        await trx.deleteFrom('protected_branch_access_levels').where('protected_branch_id', 'in', ofProject).execute();
        await trx.deleteFrom('protected_branches').where('project_id', '=', event.data.id).execute();
        return;
      }
      case 'UserDeleted':
        await trx.deleteFrom('protected_branch_access_levels').where('user_id', '=', event.data.id).execute();
        return;
      case 'GroupDeleted':
        await trx.deleteFrom('protected_branch_access_levels').where('group_id', '=', event.data.id).execute();
        return;
    }
    if (!(await claimStreamVersion(trx, 'protected_branches_stream_versions', stored))) return;
    switch (event.type) {
      case 'ProtectedBranchCreated': {
        const d = event.data;
        await trx
          .insertInto('protected_branches')
          .values({ id: d.id, project_id: d.project_id, name: d.name, code_owner_approval_required: d.code_owner_approval_required, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        const rules = ACCESS_KINDS.flatMap((kind) =>
          d[`${kind}_access_levels`].map((rule, position) => ({ protected_branch_id: d.id, kind, position, ...rule })),
        );
        if (rules.length > 0) {
          await trx
            .insertInto('protected_branch_access_levels')
            .values(rules)
            .onConflict((oc) => oc.columns(['protected_branch_id', 'kind', 'position']).doNothing())
            .execute();
        }
        return;
      }
      case 'ProtectedBranchUpdated':
        await trx
          .updateTable('protected_branches')
          .set({ code_owner_approval_required: event.data.code_owner_approval_required, updated_at: at })
          .where('id', '=', event.data.id)
          .execute();
        return;
      case 'ProtectedBranchDeleted':
        await trx.deleteFrom('protected_branch_access_levels').where('protected_branch_id', '=', event.data.id).execute();
        await trx.deleteFrom('protected_branches').where('id', '=', event.data.id).execute();
        return;
      default:
        return unhandled(event);
    }
  },
};
