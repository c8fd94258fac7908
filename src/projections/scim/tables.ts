import type { Selectable } from 'kysely';
import type { StreamVersionsTable } from '../stream-versions.js';
import type { Timestamp } from '../../database/columns.js';


export interface SamlProvidersTable {
  group_id: number;
  enabled: boolean;
  sso_url: string;
  certificate_fingerprint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ScimOauthAccessTokensTable {
  group_id: number;
  token_digest: string;
  created_at: Timestamp;
}

export interface GroupSamlIdentitiesTable {
  id: number;
  group_id: number;
  user_id: number;
  extern_uid: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ScimReadTables {
  saml_providers: SamlProvidersTable;
  scim_oauth_access_tokens: ScimOauthAccessTokensTable;
  group_saml_identities: GroupSamlIdentitiesTable;
  scim_stream_versions: StreamVersionsTable;
}

export type SamlProviderRow = Selectable<SamlProvidersTable>;

declare module '../../database/database.js' {
  interface Database extends ScimReadTables {}
}
