import type { HookSnapshot } from '../../domain/hooks/decider.js';
import { defineProjector } from '../projector.js';

const columns = (data: HookSnapshot) => ({
  url: data.url,
  ...data.flags,
  push_events_branch_filter: data.push_events_branch_filter,
  enable_ssl_verification: data.enable_ssl_verification,
});

/**
 * Inline: POST and PUT answer what they wrote. Every event is a snapshot of the hook; a
 * project's or group's deletion takes its hooks with it (GitLab's foreign keys cascade).
 */
export const hooksProjector = defineProjector({
  name: 'hooks',
  tables: ['hooks'],
  on: {
    HookCreated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('hooks')
        .values({ id: data.id, kind: data.kind, project_id: data.project_id, group_id: data.group_id, ...columns(data), created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    HookUpdated: async ({ data, occurredAt }, trx) =>
      trx.updateTable('hooks').set({ ...columns(data), updated_at: occurredAt.toISOString() }).where('id', '=', data.id).execute(),
    HookDeleted: async ({ data }, trx) => trx.deleteFrom('hooks').where('id', '=', data.id).execute(),
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('hooks').where('project_id', '=', data.id).execute(),
    GroupDeleted: async ({ data }, trx) => trx.deleteFrom('hooks').where('group_id', '=', data.id).execute(),
  },
});
