import type { GroupIdentityRow } from '../../projections/scim/queries.js';
import type { SamlProviderRow } from '../../projections/scim/tables.js';

export const SCIM_CONTENT_TYPE = 'application/scim+json';
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/**
 * EE::Gitlab::Scim::User (GitLab 12.10): the identity's extern_uid as `id`, always active
 * (deprovisioning removes the identity), the user's email as the primary work email, the
 * literal key `name.formatted`.
 */
export const toScimUser = (row: GroupIdentityRow) => ({
  schemas: [USER_SCHEMA],
  id: row.extern_uid,
  active: true,
  emails: [{ type: 'work', value: row.email, primary: true }],
  'name.formatted': row.name,
  meta: { resourceType: 'User' },
  userName: row.username,
});

/** EE::Gitlab::Scim::Users: the ListResponse. */
export const toScimList = (rows: readonly GroupIdentityRow[], page: { totalResults: number; itemsPerPage: number; startIndex: number }) => ({
  schemas: [LIST_SCHEMA],
  totalResults: page.totalResults,
  itemsPerPage: page.itemsPerPage,
  startIndex: page.startIndex,
  Resources: rows.map(toScimUser),
});

/** EE::Gitlab::Scim::Error, NotFound and Conflict: the status is a number in the body too. */
export const toScimError = (status: number, detail: string) => ({ schemas: [ERROR_SCHEMA], detail, status });

/** PUT /groups/:id/saml (a forgelog extension): the group's SAML SSO settings. */
export const toSamlProvider = (row: SamlProviderRow) => ({
  enabled: row.enabled,
  sso_url: row.sso_url,
  certificate_fingerprint: row.certificate_fingerprint,
});

/** POST /groups/:id/scim/token (a forgelog extension), as GitLab's ScimOauthAccessTokenEntity. */
export const toScimToken = (apiUrl: string, token: string) => ({ scim_api_url: apiUrl, scim_token: token });
