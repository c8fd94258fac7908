import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import { DEFAULT_FLAGS, kindOf } from '../../domain/integrations/catalogue.js';
import { integrationEvents, nilProperties, type IntegrationEvent } from '../../domain/integrations/decider.js';
import type { ProjectEvent } from '../../domain/projects/events.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * Inline: PUT answers what it wrote. Every event of an integration is a snapshot of the row
 * (flags, properties), upserted once per stream version; a project's deletion takes its
 * integrations with it.
 */
export const integrationsProjector: Projector = {
  name: 'integrations',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(integrationEvents), 'ProjectDeleted'],
  tables: ['integrations', 'integrations_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (IntegrationEvent | ProjectDeleted) & ProjectedEvent;
    if (event.type === 'ProjectDeleted') {
      await trx.deleteFrom('integrations').where('project_id', '=', event.data.id).execute();
      return;
    }
    if (!(await claimStreamVersion(trx, 'integrations_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { id, project_id, kind } = event.data;
    switch (event.type) {
      case 'IntegrationSaved': {
        const row = { ...event.data.flags, active: true, properties: JSON.stringify(event.data.properties), updated_at: at };
        await trx
          .insertInto('integrations')
          .values({ id, project_id, kind, ...row, created_at: at })
          .onConflict((oc) => oc.column('id').doUpdateSet(row))
          .execute();
        return;
      }
      case 'IntegrationDisabled': {
        const row = { active: false, properties: JSON.stringify(nilProperties(kindOf(kind))), updated_at: at };
        await trx
          .insertInto('integrations')
          .values({ id, project_id, kind, ...DEFAULT_FLAGS, ...row, created_at: at })
          .onConflict((oc) => oc.column('id').doUpdateSet(row))
          .execute();
        return;
      }
      default:
        unhandled(event);
    }
  },
};
