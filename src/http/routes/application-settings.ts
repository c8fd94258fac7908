import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import { updateApplicationSettings } from '../../commands/application-settings.js';
import { openSecrets } from '../../security/settings-secrets.js';
import { VISIBILITIES } from '../../domain/access.js';
import { attributeDef, type AttributeDef, type AttributeName, type SettingsChanges, type SettingValue } from '../../domain/application-settings/attributes.js';
import { WRITABLE_ATTRIBUTES, settingsOf } from '../../domain/application-settings/decider.js';
import { licensed, type Plan } from '../../domain/policy/licensed.js';
import { settingsRow } from '../../projections/application-settings/queries.js';
import { instanceHost, toApplicationSettings } from '../entities/application-settings.js';
import { requireAdmin, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { atLeastOneOf, declaration, optional, rawParams, t, type ParamDef, type Shape } from '../kernel/params.js';
import { documented } from '../kernel/documented.js';

/** Grape's Float from a string: a decimal number, spaces around. */
const FLOAT = z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(v) ? Number(v) : v), z.number().finite());

function paramOf(def: AttributeDef): ParamDef<unknown, false> {
  switch (def.kind) {
    case 'string':
      return optional(def.values ? t.values(def.values as [string, ...string[]]) : t.string());
    case 'boolean':
      return optional(t.boolean());
    case 'integer':
      return optional(def.values ? t.integerValues(def.values as [number, ...number[]]) : t.integer());
    case 'float':
      return optional(FLOAT);
    case 'strings':
      return optional(t.array(def.values ? t.values(def.values as [string, ...string[]]) : t.string()));
    case 'integers':
      return optional(t.array(t.integer()));
    case 'visibility':
      return optional(t.values(VISIBILITIES as unknown as ['private', 'internal', 'public']));
  }
}

/** The attributes PUT declares under a plan: EE's paid ones only under their licence (EE's filter_attributes_using_license). */
const declaredAttributes = (plan: Plan) => WRITABLE_ATTRIBUTES.filter((name) => !attributeDef(name).feature || licensed(plan, attributeDef(name).feature!));

/** Names GitLab still takes for others ("support legacy names"). */
const LEGACY = {
  allow_local_requests_from_hooks_and_services: optional(t.boolean()),
  password_authentication_enabled: optional(t.boolean()),
  signin_enabled: optional(t.boolean()),
} satisfies Shape;

/** Each writable attribute's declaration, made once: what PUT parses (those of its plan) and what it documents (all of them). */
const ATTRIBUTE_PARAMS: Shape = Object.fromEntries(WRITABLE_ATTRIBUTES.map((name) => [name, paramOf(attributeDef(name))]));

/** What PUT documents: every attribute, EE's paid ones declared only under their licence, and the legacy names. */
const UPDATE_DOC = { ...ATTRIBUTE_PARAMS, ...LEGACY } satisfies Shape;

/** Grape's `given x: ->(val) { val } do requires … end` blocks: what a set (truthy) parameter requires. */
const REQUIRES: ReadonlyArray<readonly [AttributeName, readonly AttributeName[]]> = [
  ['akismet_enabled', ['akismet_api_key']],
  ['asset_proxy_enabled', ['asset_proxy_url']],
  ['domain_blacklist_enabled', ['domain_blacklist']],
  ['eks_integration_enabled', ['eks_account_id', 'eks_access_key_id', 'eks_secret_access_key']],
  ['enforce_terms', ['terms']],
  ['external_auth_client_cert', ['external_auth_client_key']],
  ['external_authorization_service_enabled', ['external_authorization_service_default_label', 'external_authorization_service_timeout', 'external_authorization_service_url']],
  ['housekeeping_enabled', ['housekeeping_bitmaps_enabled', 'housekeeping_full_repack_period', 'housekeeping_gc_period', 'housekeeping_incremental_repack_period']],
  [
    'metrics_enabled',
    ['metrics_host', 'metrics_method_call_threshold', 'metrics_packet_size', 'metrics_pool_size', 'metrics_port', 'metrics_sample_interval', 'metrics_timeout'],
  ],
  ['plantuml_enabled', ['plantuml_url']],
  ['recaptcha_enabled', ['recaptcha_site_key', 'recaptcha_private_key']],
  ['login_recaptcha_protection_enabled', ['recaptcha_site_key', 'recaptcha_private_key']],
  ['require_two_factor_authentication', ['two_factor_grace_period']],
  ['shared_runners_enabled', ['shared_runners_text']],
  ['sourcegraph_enabled', ['sourcegraph_url']],
  ['snowplow_enabled', ['snowplow_collector_hostname']],
  ['elasticsearch_aws', ['elasticsearch_aws_region']],
  ['elasticsearch_indexing', ['elasticsearch_url']],
];

/** The PUT's parameters, checked as Grape does, as the changes GitLab's update service gets. */
async function settingsChanges(c: Context, plan: Plan): Promise<SettingsChanges> {
  const raw = await rawParams(c);
  const names = declaredAttributes(plan);
  const declared = declaration(raw);
  const parsed = declared.parse(Object.fromEntries(names.map((name) => [name, ATTRIBUTE_PARAMS[name]!]))) as Record<string, SettingValue | undefined>;
  const legacy = declared.parse(LEGACY, { mutuallyExclusive: [['password_authentication_enabled_for_web', 'password_authentication_enabled', 'signin_enabled']] });
  for (const [given, required] of REQUIRES) {
    const value = parsed[given];
    if (!names.includes(given) || value === undefined || value === false || value === '' || value === null) continue;
    for (const name of required) if (raw[name] === undefined || raw[name] === null) declared.check(`${name} is missing`);
  }
  declared.check(atLeastOneOf(raw, [...names, ...Object.keys(LEGACY)]));
  declared.done();

  const changes: Record<string, SettingValue> = {};
  for (const [name, value] of Object.entries(parsed)) if (value !== undefined) changes[name] = value;
  const web = legacy.signin_enabled ?? legacy.password_authentication_enabled;
  if (web !== undefined) changes.password_authentication_enabled_for_web = web;
  if (legacy.allow_local_requests_from_hooks_and_services !== undefined) {
    changes.allow_local_requests_from_web_hooks_and_services = legacy.allow_local_requests_from_hooks_and_services;
  }
  return changes;
}

async function present(c: Context) {
  const { db, config } = appContext(c);
  const row = await settingsRow(db);
  const settings = await openSecrets(db, settingsOf(row?.attributes ?? {}));
  return toApplicationSettings(settings, { created_at: row?.created_at ?? null, updated_at: row?.updated_at ?? null }, { plan: config.plan, host: instanceHost(config.externalUrl) });
}

/** GitLab's API::Settings: administrators only (anonymous 401, others 403). */
export const applicationSettingsRoutes = new Hono<AppEnv>()
  .get('/application/settings', documented({ summary: 'Get the current application settings', auth: 'admin', responses: { 200: 'ApplicationSetting', 403: 'Error' } }), async (c) => {
    await requireAdmin(c);
    return c.json(await present(c));
  })

  .put('/application/settings', documented({ summary: 'Modify application settings', params: UPDATE_DOC, auth: 'admin', responses: { 200: 'ApplicationSetting', 403: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const { config } = appContext(c);
    const changes = await settingsChanges(c, config.plan);
    await updateApplicationSettings(w, changes, { host: instanceHost(config.externalUrl) });
    return c.json(await present(c));
  });
