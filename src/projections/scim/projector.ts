import type { Db } from '../../database/database.js';
import { unhandled } from '../../domain/decider.js';
import { eventTypesOf } from '../../domain/events.js';
import type { GroupEvent } from '../../domain/groups/events.js';
import { scimEvents, type ScimEvent } from '../../domain/scim.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../projector.js';
import { claimStreamVersion } from '../stream-versions.js';

type GroupDeleted = Extract<GroupEvent, { type: 'GroupDeleted' }>;

/**
 * Inline: SCIM reads what it just provisioned. A group's own events are applied once
 * (scim_stream_versions); its deletion takes its provider, token and identities with it, by
 * an absolute condition.
 */
export const scimProjector: Projector = {
  name: 'scim',
  version: 1,
  mode: 'inline',
  handles: [...eventTypesOf(scimEvents), 'GroupDeleted'],
  tables: ['saml_providers', 'scim_oauth_access_tokens', 'group_saml_identities', 'scim_stream_versions'],
  async apply(stored: ProjectedEvent, trx: Db) {
    const event = stored as unknown as (ScimEvent | GroupDeleted) & ProjectedEvent;
    if (event.type === 'GroupDeleted') {
      for (const table of ['saml_providers', 'scim_oauth_access_tokens', 'group_saml_identities'] as const) {
        await trx.deleteFrom(table).where('group_id', '=', event.data.id).execute();
      }
      return;
    }
    if (!(await claimStreamVersion(trx, 'scim_stream_versions', stored))) return;
    const at = stored.occurredAt.toISOString();
    const { group_id } = event.data;
    switch (event.type) {
      case 'SamlProviderConfigured': {
        const { enabled, sso_url, certificate_fingerprint } = event.data;
        await trx
          .insertInto('saml_providers')
          .values({ group_id, enabled, sso_url, certificate_fingerprint, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('group_id').doUpdateSet({ enabled, sso_url, certificate_fingerprint, updated_at: at }))
          .execute();
        return;
      }
      case 'ScimTokenGenerated':
        await trx
          .insertInto('scim_oauth_access_tokens')
          .values({ group_id, token_digest: event.data.token_digest, created_at: at })
          .onConflict((oc) => oc.column('group_id').doUpdateSet({ token_digest: event.data.token_digest, created_at: at }))
          .execute();
        return;
      case 'GroupSamlIdentityLinked': {
        const { identity_id: id, user_id, extern_uid } = event.data;
        await trx
          .insertInto('group_saml_identities')
          .values({ id, group_id, user_id, extern_uid, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      }
      case 'GroupSamlIdentityUidChanged':
        await trx.updateTable('group_saml_identities').set({ extern_uid: event.data.extern_uid, updated_at: at }).where('id', '=', event.data.identity_id).execute();
        return;
      case 'GroupSamlIdentityUnlinked':
        await trx.deleteFrom('group_saml_identities').where('id', '=', event.data.identity_id).execute();
        return;
      default:
        unhandled(event);
    }
  },
};
