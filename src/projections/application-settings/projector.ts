import { sql } from 'kysely';
import { defineProjector } from '../projector.js';

/**
 * Inline: GET answers what PUT just wrote, and other areas read the settings in their
 * commands. Each change merges its attributes into the one row (the kernel applies it once);
 * nothing is read back, so the statements go with the append.
 */
export const applicationSettingsProjector = defineProjector({
  name: 'application_settings',
  tables: ['application_settings'],
  on: {
    ApplicationSettingsChanged: async ({ data, occurredAt }, trx) => {
      const changes = JSON.stringify(data.changes);
      const at = occurredAt.toISOString();
      await sql`
        insert into application_settings as s (id, attributes, created_at, updated_at)
        values (1, ${changes}::jsonb, ${at}::timestamptz, ${at}::timestamptz)
        on conflict (id) do update set attributes = s.attributes || excluded.attributes, updated_at = excluded.updated_at`.execute(trx);
    },
  },
});
