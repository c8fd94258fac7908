import { defineProjector } from '../projector.js';

/**
 * Inline: SCIM reads what it just provisioned. A group's own SCIM events are applied once (the
 * kernel guards); its deletion takes its provider, token and identities with it, by an
 * absolute condition.
 */
export const scimProjector = defineProjector({
  name: 'scim',
  tables: ['saml_providers', 'scim_oauth_access_tokens', 'group_saml_identities'],
  on: {
    SamlProviderConfigured: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { group_id, enabled, sso_url, certificate_fingerprint } = data;
      await trx
        .insertInto('saml_providers')
        .values({ group_id, enabled, sso_url, certificate_fingerprint, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('group_id').doUpdateSet({ enabled, sso_url, certificate_fingerprint, updated_at: at }))
        .execute();
    },
    ScimTokenGenerated: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('scim_oauth_access_tokens')
        .values({ group_id: data.group_id, token_digest: data.token_digest, created_at: at })
        .onConflict((oc) => oc.column('group_id').doUpdateSet({ token_digest: data.token_digest, created_at: at }))
        .execute();
    },
    GroupSamlIdentityLinked: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      const { identity_id: id, group_id, user_id, extern_uid } = data;
      await trx
        .insertInto('group_saml_identities')
        .values({ id, group_id, user_id, extern_uid, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    GroupSamlIdentityUidChanged: async ({ data, occurredAt }, trx) =>
      trx.updateTable('group_saml_identities').set({ extern_uid: data.extern_uid, updated_at: occurredAt.toISOString() }).where('id', '=', data.identity_id).execute(),
    GroupSamlIdentityUnlinked: async ({ data }, trx) => trx.deleteFrom('group_saml_identities').where('id', '=', data.identity_id).execute(),
  },
  cascades: {
    GroupDeleted: async ({ data }, trx) => {
      for (const table of ['saml_providers', 'scim_oauth_access_tokens', 'group_saml_identities'] as const) {
        await trx.deleteFrom(table).where('group_id', '=', data.id).execute();
      }
    },
  },
});
