import { defineProjector } from '../projector.js';

/** Inline: the API reads what it just wrote. A project's deletion removes its protected tags. */
export const protectedTagsProjector = defineProjector({
  name: 'protected_tags',
  tables: ['protected_tags', 'protected_tag_create_access_levels'],
  on: {
    ProtectedTagCreated: async ({ data: d, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('protected_tags')
        .values({ id: d.id, project_id: d.project_id, name: d.name, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      if (d.create_access_levels.length > 0) {
        await trx
          .insertInto('protected_tag_create_access_levels')
          .values(d.create_access_levels.map((rule, position) => ({ protected_tag_id: d.id, position, access_level: rule.access_level })))
          .onConflict((oc) => oc.columns(['protected_tag_id', 'position']).doNothing())
          .execute();
      }
    },
    ProtectedTagDeleted: async ({ data }, trx) => {
      await trx.deleteFrom('protected_tag_create_access_levels').where('protected_tag_id', '=', data.id).execute();
      await trx.deleteFrom('protected_tags').where('id', '=', data.id).execute();
    },
  },
  cascades: {
    ProjectDeleted: async ({ data }, trx) => {
      const ofProject = trx.selectFrom('protected_tags').select('id').where('project_id', '=', data.id);
      await trx.deleteFrom('protected_tag_create_access_levels').where('protected_tag_id', 'in', ofProject).execute();
      await trx.deleteFrom('protected_tags').where('project_id', '=', data.id).execute();
    },
  },
});
