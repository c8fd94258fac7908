import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { applicationSettingsEvents, type ApplicationSettingsEvent } from '../../domain/application-settings/decider.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { recordStreamVersion, unapplied } from '../stream-versions.js';

/**
 * Inline: GET answers what PUT just wrote, and other areas read the settings in their
 * commands. Each change merges its attributes into the one row, once (guarded by the stream
 * version); nothing is read back, so the statements go with the append.
 */
export const applicationSettingsProjector: Projector = {
  name: 'application_settings',
  version: 1,
  mode: 'inline',
  handles: eventTypesOf(applicationSettingsEvents),
  tables: ['application_settings', 'application_settings_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as ApplicationSettingsEvent & ProjectedEvent;
    const at = stored.occurredAt.toISOString();
    switch (event.type) {
      case 'ApplicationSettingsChanged': {
        const changes = JSON.stringify(event.data.changes);
        await sql`
          insert into application_settings as s (id, attributes, created_at, updated_at)
          select 1, ${changes}::jsonb, ${at}::timestamptz, ${at}::timestamptz
          where ${unapplied('application_settings_stream_versions', stored)}
          on conflict (id) do update set attributes = s.attributes || excluded.attributes, updated_at = excluded.updated_at`.execute(trx);
        await recordStreamVersion(trx, 'application_settings_stream_versions', stored);
        return;
      }
      default:
        return unhandled(event.type);
    }
  },
};
