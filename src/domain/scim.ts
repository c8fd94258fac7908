import { z } from 'zod';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { conflict, invalid, notFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * A top-level group's SAML single sign-on and SCIM provisioning (GitLab EE's SamlProvider,
 * ScimOauthAccessToken and the group's `group_saml` identities): one aggregate per group,
 * stream `scim-<group id>`. GitLab 12 with the `scim_identities` flag off (its default):
 * an identity is the user's group_saml Identity, and deprovisioning removes it.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofGroup = { group_id: z.int() };
const ofIdentity = { ...ofGroup, identity_id: z.int(), user_id: z.int(), extern_uid: z.string() };

export const scimEvents = {
  /** The provider's settings after the change (the first one creates it). */
  SamlProviderConfigured: z.strictObject({ ...ofGroup, enabled: z.boolean(), sso_url: z.string(), certificate_fingerprint: z.string() }),
  /** A new SCIM token replaces the group's previous one; only its SHA-256 digest is kept. */
  ScimTokenGenerated: z.strictObject({ ...ofGroup, token_digest: z.string() }),
  GroupSamlIdentityLinked: z.strictObject(ofIdentity),
  GroupSamlIdentityUidChanged: z.strictObject({ ...ofIdentity, previous_extern_uid: z.string() }),
  GroupSamlIdentityUnlinked: z.strictObject(ofIdentity),
} satisfies EventSchemas;

export type ScimEvent = EventOf<typeof scimEvents>;

export const scimStreamId = (groupId: number) => `scim-${groupId}`;

export const scimEventIndex = (event: ScimEvent): FeedIndex => {
  switch (event.type) {
    case 'SamlProviderConfigured':
    case 'ScimTokenGenerated':
      return { groupId: event.data.group_id };
    default:
      return { groupId: event.data.group_id, targetType: 'User', targetId: event.data.user_id };
  }
};

// ───────────────────────────── State ─────────────────────────────

export interface SamlProviderRecord {
  readonly enabled: boolean;
  readonly ssoUrl: string;
  readonly certificateFingerprint: string;
}

export interface IdentityRecord {
  readonly id: number;
  readonly userId: number;
  readonly externUid: string;
}

export interface ScimState {
  readonly groupId: number;
  readonly provider: SamlProviderRecord | null;
  readonly tokenDigest: string | null;
  /** By lower-cased extern_uid: GitLab matches it case-insensitively. */
  readonly identities: ReadonlyMap<string, IdentityRecord>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type ScimCommand =
  | { readonly type: 'ConfigureSamlProvider'; readonly enabled?: boolean | undefined; readonly ssoUrl?: string | undefined; readonly certificateFingerprint?: string | undefined }
  | { readonly type: 'GenerateScimToken'; readonly tokenDigest: string }
  | { readonly type: 'LinkGroupSamlIdentity'; readonly identityId: number; readonly userId: number; readonly externUid: string }
  | { readonly type: 'ChangeGroupSamlIdentityUid'; readonly externUid: string; readonly newExternUid: string }
  | { readonly type: 'UnlinkGroupSamlIdentity'; readonly externUid: string };

// ───────────────────────────── Rules ─────────────────────────────

/** CertificateFingerprintValidator (GitLab 12). */
const FINGERPRINT = /^([a-zA-Z0-9]{2}[\s\-:]?){16,}$/;
const FINGERPRINT_MESSAGE = 'must be a hash containing only letters, numbers, spaces, : and -';

/** AddressableUrlValidator with `schemes: %w(https), ascii_only: true`. */
function ssoUrlErrors(url: string): string[] {
  if (url.trim() === '') return ["can't be blank"];
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7F]*$/.test(url)) return ['is blocked: URI must be ascii only'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['is blocked: URI is invalid'];
  }
  return parsed.protocol === 'https:' ? [] : ['is blocked: Only allowed schemes are https'];
}

function fingerprintErrors(fingerprint: string): string[] {
  const errors = fingerprint.trim() === '' ? ["can't be blank"] : [];
  if (!FINGERPRINT.test(fingerprint)) errors.push(FINGERPRINT_MESSAGE);
  return errors;
}

/** SamlProvider's validations, in its declaration order; `‎` (U+200E) is stripped from the fingerprint as its setter does. */
function validProvider(provider: SamlProviderRecord): SamlProviderRecord {
  const fields: Record<string, string[]> = {};
  const certificateFingerprint = provider.certificateFingerprint.replace(/\u200E/g, '');
  const urls = ssoUrlErrors(provider.ssoUrl);
  const fingerprints = fingerprintErrors(certificateFingerprint);
  if (urls.length > 0) fields.sso_url = urls;
  if (fingerprints.length > 0) fields.certificate_fingerprint = fingerprints;
  if (Object.keys(fields).length > 0) throw invalid(fields);
  return { ...provider, certificateFingerprint };
}

const uidKey = (externUid: string) => externUid.toLowerCase();

export const identityNotFound = () => notFound('Identity');

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: ScimState, event: ScimEvent): ScimState {
  switch (event.type) {
    case 'SamlProviderConfigured': {
      const { enabled, sso_url, certificate_fingerprint } = event.data;
      return { ...state, provider: { enabled, ssoUrl: sso_url, certificateFingerprint: certificate_fingerprint } };
    }
    case 'ScimTokenGenerated':
      return { ...state, tokenDigest: event.data.token_digest };
    case 'GroupSamlIdentityLinked': {
      const identities = new Map(state.identities);
      identities.set(uidKey(event.data.extern_uid), { id: event.data.identity_id, userId: event.data.user_id, externUid: event.data.extern_uid });
      return { ...state, identities };
    }
    case 'GroupSamlIdentityUidChanged': {
      const identities = new Map(state.identities);
      identities.delete(uidKey(event.data.previous_extern_uid));
      identities.set(uidKey(event.data.extern_uid), { id: event.data.identity_id, userId: event.data.user_id, externUid: event.data.extern_uid });
      return { ...state, identities };
    }
    case 'GroupSamlIdentityUnlinked': {
      const identities = new Map(state.identities);
      identities.delete(uidKey(event.data.extern_uid));
      return { ...state, identities };
    }
    default:
      return unhandled(event);
  }
}

/** The longest extern_uid forgelog keeps (an indexed, case-insensitively unique column): Rails' length message past it. */
export const EXTERN_UID_MAX = 255;

function externUidFits(externUid: string) {
  if (externUid.length > EXTERN_UID_MAX) throw invalid({ extern_uid: [`is too long (maximum is ${EXTERN_UID_MAX} characters)`] });
}

function decide(command: ScimCommand, state: ScimState): ScimEvent[] {
  const group_id = state.groupId;
  switch (command.type) {
    case 'ConfigureSamlProvider': {
      // SamlProvider#set_defaults: a new provider is enabled.
      const current = state.provider ?? { enabled: true, ssoUrl: '', certificateFingerprint: '' };
      const next = validProvider({
        enabled: command.enabled ?? current.enabled,
        ssoUrl: command.ssoUrl ?? current.ssoUrl,
        certificateFingerprint: command.certificateFingerprint ?? current.certificateFingerprint,
      });
      const unchanged = state.provider && next.enabled === current.enabled && next.ssoUrl === current.ssoUrl && next.certificateFingerprint === current.certificateFingerprint;
      if (unchanged) return [];
      return [{ type: 'SamlProviderConfigured', data: { group_id, enabled: next.enabled, sso_url: next.ssoUrl, certificate_fingerprint: next.certificateFingerprint } }];
    }
    case 'GenerateScimToken':
      return [{ type: 'ScimTokenGenerated', data: { group_id, token_digest: command.tokenDigest } }];
    case 'LinkGroupSamlIdentity': {
      externUidFits(command.externUid);
      // Identity: extern_uid and user_id are each unique per provider.
      if (state.identities.has(uidKey(command.externUid))) throw conflict('Extern uid has already been taken');
      if ([...state.identities.values()].some((identity) => identity.userId === command.userId)) throw conflict('User has already been taken');
      return [{ type: 'GroupSamlIdentityLinked', data: { group_id, identity_id: command.identityId, user_id: command.userId, extern_uid: command.externUid } }];
    }
    case 'ChangeGroupSamlIdentityUid': {
      externUidFits(command.newExternUid);
      const identity = state.identities.get(uidKey(command.externUid));
      if (!identity) throw identityNotFound();
      if (command.newExternUid === identity.externUid) return [];
      const taken = state.identities.get(uidKey(command.newExternUid));
      if (taken && taken.id !== identity.id) throw conflict('Extern uid has already been taken');
      const ref = { group_id, identity_id: identity.id, user_id: identity.userId };
      return [{ type: 'GroupSamlIdentityUidChanged', data: { ...ref, extern_uid: command.newExternUid, previous_extern_uid: identity.externUid } }];
    }
    case 'UnlinkGroupSamlIdentity': {
      const identity = state.identities.get(uidKey(command.externUid));
      if (!identity) throw identityNotFound();
      return [{ type: 'GroupSamlIdentityUnlinked', data: { group_id, identity_id: identity.id, user_id: identity.userId, extern_uid: identity.externUid } }];
    }
    default:
      return unhandled(command);
  }
}

export const scimDecider: Decider<ScimCommand, ScimEvent, ScimState, number> = {
  initialState: (groupId) => ({ groupId, provider: null, tokenDigest: null, identities: new Map() }),
  evolve,
  decide,
};

/** The identity of an extern_uid in the group's state (case-insensitive, as GitLab's `iwhere`). */
export const identityOf = (state: ScimState, externUid: string) => state.identities.get(uidKey(externUid));

// ───────────────────────────── Claims ─────────────────────────────

/** `validates :extern_uid, uniqueness: { scope: [:provider, :saml_provider_id], case_sensitive: false }`. */
const uidClaim = (groupId: number, externUid: string) => ({ kind: 'group_saml_extern_uid', key: `${groupId}/${uidKey(externUid)}`, conflictMessage: 'Extern uid has already been taken' });

export const scimClaimRefusal: ClaimRefusal = (claim) => conflict(claim.conflictMessage);

export function scimClaims(event: ScimEvent): ClaimChanges {
  switch (event.type) {
    case 'GroupSamlIdentityLinked':
      return { acquire: [uidClaim(event.data.group_id, event.data.extern_uid)], release: [] };
    case 'GroupSamlIdentityUidChanged':
      // The same uid in another case is the same claim: nothing to take or give back.
      if (uidKey(event.data.extern_uid) === uidKey(event.data.previous_extern_uid)) return NO_CLAIMS;
      return { acquire: [uidClaim(event.data.group_id, event.data.extern_uid)], release: [uidClaim(event.data.group_id, event.data.previous_extern_uid)] };
    case 'GroupSamlIdentityUnlinked':
      return { acquire: [], release: [uidClaim(event.data.group_id, event.data.extern_uid)] };
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── Provisioning ─────────────────────────────

/**
 * GitLab's Namespace.clean_path before its uniquifying: the part before an `@`, only
 * letters, digits, `_`, `-` and `.`, no trailing `.git`/`.atom`/`.`, no leading `-`, and
 * "blank" for nothing left.
 */
export function cleanPath(path: string): string {
  const cleaned = path
    .replace(/@.*$/s, '')
    .replace(/[^a-zA-Z0-9_\-.]/g, '')
    .replace(/(\.atom|\.git|\.)*$/, '')
    .replace(/^-+/, '');
  return cleaned.trim() === '' ? 'blank' : cleaned;
}

/** What SCIM sends and GitLab maps (EE::Gitlab::Scim::AttributeTransform), by GitLab's attribute. */
export interface ScimAttributes {
  readonly extern_uid?: string;
  readonly name?: string;
  readonly email?: string;
  readonly username?: string;
  readonly active?: boolean;
}

const ATTRIBUTES: Readonly<Record<string, keyof ScimAttributes>> = {
  id: 'extern_uid',
  externalId: 'extern_uid',
  displayName: 'name',
  'name.formatted': 'name',
  'emails[type eq "work"].value': 'email',
  active: 'active',
  userName: 'username',
};

/** EE::Gitlab::Scim::ValueParser: "True"/"False" (in any case) are booleans, other strings stay. */
function typeCast(value: unknown): unknown {
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return value;
}

function assign(into: Record<string, unknown>, path: string, value: unknown) {
  const attribute = ATTRIBUTES[path];
  if (attribute === undefined) return;
  const cast = typeCast(value);
  if (attribute === 'active' ? typeof cast === 'boolean' : typeof cast === 'string') into[attribute] = cast;
}

/**
 * A PATCH's Operations as GitLab's ParamsParser#update_params reads them: `Replace` and `Add`
 * (in any case, as identity providers send them), each `path` mapped, or without a path a
 * `value` object whose keys are paths; anything else is ignored.
 */
export function updateAttributes(operations: readonly unknown[]): ScimAttributes {
  const attributes: Record<string, unknown> = {};
  for (const operation of operations) {
    if (!operation || typeof operation !== 'object') continue;
    const { op, path, value } = operation as { op?: unknown; path?: unknown; value?: unknown };
    if (typeof op !== 'string' || !['replace', 'add'].includes(op.toLowerCase())) continue;
    if (typeof path === 'string') assign(attributes, path, value);
    else if (value && typeof value === 'object' && !Array.isArray(value)) for (const [key, inner] of Object.entries(value)) assign(attributes, key, inner);
  }
  return attributes as ScimAttributes;
}

export type ScimFilter = { readonly attribute: 'extern_uid' | 'username'; readonly value: string };

/**
 * A list filter GitLab 12 answers: `id eq "…"` (also `externalId`) or `userName eq "…"`;
 * null for any other (412 "Unsupported Filter").
 */
export function parseFilter(filter: string): ScimFilter | null {
  const match = /^\s*(\S+)\s+(\S+)\s+(.+?)\s*$/s.exec(filter);
  if (!match || match[2]!.toLowerCase() !== 'eq') return null;
  const quoted = /^"(.*)"$/s.exec(match[3]!);
  const value = quoted ? quoted[1]! : match[3]!;
  const attribute = ATTRIBUTES[match[1]!];
  if ((attribute !== 'extern_uid' && attribute !== 'username') || value === '') return null;
  return { attribute, value };
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** A top-level group's SAML SSO, SCIM token and SAML identities (src/domain/scim.ts). */
export const scim = defineAggregate({
  name: 'scim',
  streamId: scimStreamId,
  events: scimEvents,
  decider: scimDecider,
  claims: scimClaims,
  claimRefusal: scimClaimRefusal,
  index: scimEventIndex,
});
