import { DEFAULT_FLAGS, kindOf } from '../../domain/integrations/catalogue.js';
import { nilProperties } from '../../domain/integrations/decider.js';
import { defineProjector } from '../projector.js';

/**
 * Inline: PUT answers what it wrote. Every event of an integration is a snapshot of the row
 * (flags, properties), upserted once per stream version (the kernel guards); a project's
 * deletion takes its integrations with it.
 */
export const integrationsProjector = defineProjector({
  name: 'integrations',
  tables: ['integrations'],
  on: {
    IntegrationSaved: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, kind } = data;
      const row = { ...data.flags, active: true, properties: JSON.stringify(data.properties), updated_at: at };
      await trx
        .insertInto('integrations')
        .values({ id, project_id, kind, ...row, created_at: at })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    },
    IntegrationDisabled: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { id, project_id, kind } = data;
      const row = { active: false, properties: JSON.stringify(nilProperties(kindOf(kind))), updated_at: at };
      await trx
        .insertInto('integrations')
        .values({ id, project_id, kind, ...DEFAULT_FLAGS, ...row, created_at: at })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => trx.deleteFrom('integrations').where('project_id', '=', data.id).execute(),
  },
});
