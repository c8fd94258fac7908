import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { sql } from 'kysely';
import { deprovisionScimIdentity, generateScimToken, provisionScimUser } from '../../commands/scim.js';
import { tokenDigest } from '../../security/secrets.js';
import { updateUser } from '../../commands/users.js';
import { DomainError, type FieldErrors, forbidden, notFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { updateAttributes, parseFilter, scim } from '../../domain/scim.js';
import { findGroupByIdOrPath, findGroupIdentity, findSamlProvider, groupIdentitiesQuery, scimTokenGroupId, userIdForUserName } from '../../projections/scim/queries.js';
import { SCIM_CONTENT_TYPE, toSamlProvider, toScimError, toScimList, toScimToken, toScimUser } from '../entities/scim.js';
import { requireWriter, writerFor } from '../kernel/auth.js';
import { appContext, NOBODY, type AppEnv, type Auth } from '../kernel/context.js';
import { toErrorResponse, unauthorized } from '../kernel/errors.js';
import { optional, params, rawParams, t, type RawParams, type Shape } from '../kernel/params.js';
import { documented, REFUSED, type ResponseBody } from '../kernel/documented.js';
import { header } from '../kernel/request.js';
import { pathNamed, userGroup } from '../kernel/scope.js';
import { run } from '../../commands/kernel/run.js';

export const SCIM_PREFIX = '/api/scim/v2';

// ───────────────────────────── Answers ─────────────────────────────

/** A SCIM error GitLab answers in SCIM's form (render_scim_error): 404 NotFound, 409 Conflict, 412 Error. */
class ScimFailure extends Error {
  constructor(
    readonly status: 404 | 409 | 412,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const scimJson = (c: Context, body: unknown, status: ContentfulStatusCode) => c.body(JSON.stringify(body), status, { 'Content-Type': SCIM_CONTENT_TYPE });

/**
 * Every SCIM endpoint: its answers, errors included, are `application/scim+json` (Grape's
 * `content_type :json, 'application/scim+json'`); GitLab's own errors (401, a body that does
 * not parse) keep their GitLab body.
 */
const scimEndpoint = (handler: (c: Context<AppEnv>) => Promise<Response>) => async (c: Context<AppEnv>) => {
  try {
    return await handler(c);
  } catch (error) {
    if (error instanceof ScimFailure) return scimJson(c, toScimError(error.status, error.detail), error.status);
    const mapped = toErrorResponse(error);
    if (!mapped) throw error;
    return mapped.body === undefined ? c.body(null, mapped.status) : scimJson(c, mapped.body, mapped.status as ContentfulStatusCode);
  }
};

/** Ruby's Hash#inspect of the request's parameters, as GitLab 12 puts `params.inspect` in a SCIM error's detail. */
function rubyInspect(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(rubyInspect).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${JSON.stringify(key)}=>${rubyInspect(inner)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(String(value));
}

const paramsInspect = (c: Context, raw: RawParams) => rubyInspect({ ...raw, group: c.req.param('group') });

/** Rails' errors.full_messages.to_sentence. */
function fullMessagesSentence(fields: FieldErrors): string {
  const messages = Object.entries(fields).flatMap(([field, list]) => {
    const human = field.replace(/_/g, ' ');
    return list.map((message) => `${human.charAt(0).toUpperCase()}${human.slice(1)} ${message}`);
  });
  if (messages.length <= 2) return messages.join(' and ');
  return `${messages.slice(0, -1).join(', ')}, and ${messages.at(-1)}`;
}

// ───────────────────────────── The group and its token ─────────────────────────────

/** The SCIM token an identity provider sends: `Authorization: Bearer <token>` only. */
function bearerToken(c: Context): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header(c, 'authorization') ?? '');
  return match?.[1];
}

/**
 * find_and_authenticate_group!: the group of `:group` (404 in SCIM's form), then the token,
 * which must be that group's SCIM token (401 as GitLab's `unauthorized!`), then SAML SSO,
 * which must be enabled for the group on a plan that has it (404, GitLab's later wording).
 */
async function scimGroup(c: Context) {
  const path = c.req.param('group') ?? '';
  const { db, config } = appContext(c);
  const group = await findGroupByIdOrPath(db, path);
  if (!group) throw new ScimFailure(404, `Group ${path} not found`);
  const token = bearerToken(c);
  if (token === undefined || (await scimTokenGroupId(db, tokenDigest(token))) !== group.id) throw unauthorized();
  const provider = await findSamlProvider(db, group.id);
  if (!licensed(config.plan, 'group_saml') || !provider?.enabled) throw new ScimFailure(404, `Group ${path} does not have SAML SSO configured`);
  return group;
}

const identityOf = (c: Context, groupId: number) =>
  pathNamed(c, 'id', (db, id) => findGroupIdentity(db, groupId, id), (id) => new ScimFailure(404, `Resource ${id} not found`));

// ───────────────────────────── Parameters ─────────────────────────────

/** Ruby's String#to_i: the leading integer, 0 for none. */
const toI = (value: unknown) => {
  const match = typeof value === 'string' || typeof value === 'number' ? /^\s*([-+]?\d+)/.exec(String(value)) : null;
  return match ? Number.parseInt(match[1]!, 10) : 0;
};

/** ScimPagination#per_page: Kaminari's default (20) for nothing or below 1, at most its maximum (100). */
const perPage = (count: unknown) => {
  const requested = toI(count);
  return requested <= 0 ? 20 : Math.min(requested, 100);
};

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** ParamsParser#post_params: the mapped attributes, the work (or primary) email, the formatted (or given and family) name. */
function postAttributes(raw: RawParams) {
  const emails = Array.isArray(raw.emails) ? (raw.emails as unknown[]) : [];
  const work = emails.find((e): e is Record<string, unknown> => !!e && typeof e === 'object' && ((e as Record<string, unknown>).type === 'work' || !!(e as Record<string, unknown>).primary));
  const name = raw.name && typeof raw.name === 'object' ? (raw.name as Record<string, unknown>) : undefined;
  const formatted = text(name?.formatted)?.trim() ? text(name?.formatted) : undefined;
  const joined = name ? [text(name.givenName), text(name.familyName)].filter((part) => part !== undefined).join(' ') : undefined;
  return {
    externUid: text(raw.externalId) ?? text(raw.id),
    username: text(raw.userName),
    email: text(work?.value),
    name: formatted ?? joined ?? text(raw.displayName) ?? '',
  };
}

// ───────────────────────────── SCIM ─────────────────────────────

/** POST …/Users: provisions a user (EE::Gitlab::Scim::ProvisioningService). */
const provision = scimEndpoint(async (c) => {
  const raw = await rawParams(c);
  const group = await scimGroup(c);
  const { db } = appContext(c);
  const input = postAttributes(raw);
  const missing = [input.externUid === undefined ? ':extern_uid' : null, input.email === undefined ? ':email' : null, input.username === undefined ? ':username' : null].filter(Boolean);
  if (missing.length > 0) throw new ScimFailure(412, `Error saving user with ${paramsInspect(c, raw)}: Missing params: [${missing.join(', ')}]`);
  const { externUid, username, email } = input as { externUid: string; username: string; email: string };
  // GitLab: an identity that exists, of a member of the group, is answered as created.
  const existing = await findGroupIdentity(db, group.id, externUid);
  const member = existing && (await db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace').where('source_id', '=', group.id).where('user_id', '=', existing.user_id).executeTakeFirst());
  if (existing && member) return scimJson(c, toScimUser(existing), 201);
  try {
    await provisionScimUser(writerFor(c, NOBODY), group.id, { externUid, username, email, name: input.name });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const saving = `Error saving user with ${paramsInspect(c, raw)}`;
    if (error.code === 'conflict') throw new ScimFailure(409, `${saving}: ${error.text ?? error.message}`);
    if (error.code === 'invalid') throw new ScimFailure(412, `${saving}: ${fullMessagesSentence(error.fields ?? {})}`);
    throw error;
  }
  return scimJson(c, toScimUser((await findGroupIdentity(db, group.id, externUid))!), 201);
});

const USERS = '/groups/:group/Users';

/**
 * GET Users' query as GitLab declares it (`optional :filter, type: String`, `:startIndex`,
 * `:count`, Integer). Documentation only: the handler reads them from the raw parameters,
 * leniently as SCIM clients expect (a bad number is the default), so no declaration checks them.
 */
const scimListDoc = { filter: optional(t.string()), startIndex: optional(t.integer()), count: optional(t.integer()) } satisfies Shape;
/** A SCIM body (`application/scim+json`): a ListResponse, a User, or an error (412, 409, 404). */
const scimBody = (description: string): ResponseBody => ({ type: 'object', description });
/** The group's SCIM token as `Authorization: Bearer`; its failures are SCIM errors. */
const SCIM_REFUSED = { 401: scimBody('SCIM error'), 404: scimBody('SCIM error') } as const;
const USER = '/groups/:group/Users/:id{.+}';

/** POST Users: a SCIM User body (externalId, userName, emails, name, active), read from the raw parameters as GitLab's `requires` would. */
const PROVISION_DOC = {
  summary: 'Create a SAML user (a SCIM User body: externalId, userName, emails, name)',
  auth: 'public',
  responses: { 201: scimBody('SCIM User'), 409: scimBody('SCIM error'), 412: scimBody('SCIM error'), ...SCIM_REFUSED },
} as const;

/** API::Scim (GitLab EE 12.x, `group_saml`), mounted at /api/scim/v2. */
export const scimRoutes = new Hono<AppEnv>()
  .get(
    USERS,
    documented({ summary: 'Get SAML users', params: scimListDoc, auth: 'public', responses: { 200: scimBody('SCIM ListResponse of Users'), 412: scimBody('SCIM error'), ...SCIM_REFUSED } }),
    scimEndpoint(async (c) => {
      const raw = await rawParams(c);
      const group = await scimGroup(c);
      const { db } = appContext(c);
      let query = groupIdentitiesQuery(db, group.id);
      const filter = raw.filter;
      if (filter !== undefined && !(typeof filter === 'string' && filter.trim() === '')) {
        const parsed = typeof filter === 'string' ? parseFilter(filter) : null;
        if (!parsed) throw new ScimFailure(412, 'Unsupported Filter');
        if (parsed.attribute === 'extern_uid') query = query.where(sql`lower(i.extern_uid)`, '=', parsed.value.toLowerCase());
        else {
          const userId = await userIdForUserName(db, parsed.value);
          query = userId === undefined ? query.where(sql<boolean>`false`) : query.where('i.user_id', '=', userId);
        }
      }
      const itemsPerPage = perPage(raw.count);
      // ScimPaginatable: a 1-based index, values below 1 read as 1.
      const startIndex = Math.min(Math.max(toI(raw.startIndex), 1), Number.MAX_SAFE_INTEGER);
      const { total } = await query.clearSelect().select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow();
      const rows = await query.orderBy('i.id').offset(startIndex - 1).limit(itemsPerPage).execute();
      return scimJson(c, toScimList(rows, { totalResults: Number(total), itemsPerPage, startIndex }), 200);
    }),
  )

  .get(
    USER,
    documented({ summary: 'Get a SAML user', auth: 'public', responses: { 200: scimBody('SCIM User'), ...SCIM_REFUSED } }),
    scimEndpoint(async (c) => {
      const group = await scimGroup(c);
      return scimJson(c, toScimUser(await identityOf(c, group.id)), 200);
    }),
  )

  .post(USERS, documented(PROVISION_DOC), provision)
  // The spec's path, `POST /groups/:group_path/Users/`.
  .post(`${USERS}/`, documented(PROVISION_DOC), provision)

  .patch(
    USER,
    documented({ summary: 'Updates a SAML user (a SCIM PatchOp body: Operations)', auth: 'public', responses: { 204: null, 409: scimBody('SCIM error'), 412: scimBody('SCIM error'), ...SCIM_REFUSED } }),
    scimEndpoint(async (c) => {
      const raw = await rawParams(c);
      const group = await scimGroup(c);
      const identity = await identityOf(c, group.id);
      const { db } = appContext(c);
      const failed = () => new ScimFailure(412, `Error updating ${identity.name} with ${paramsInspect(c, raw)}`);
      if (!Array.isArray(raw.Operations)) throw failed();
      const attributes = updateAttributes(raw.Operations);
      const w = writerFor(c, NOBODY);
      try {
        if (attributes.active === false) {
          await deprovisionScimIdentity(w, group.id, { externUid: identity.extern_uid, userId: identity.user_id });
        } else if (attributes.extern_uid !== undefined) {
          // GitLab 12: a new extern_uid is the only change made then.
          await run(w, scim, group.id, { type: 'ChangeGroupSamlIdentityUid', externUid: identity.extern_uid, newExternUid: attributes.extern_uid });
        } else {
          const { name, email, username } = attributes;
          if (email !== undefined) {
            const taken = await db.selectFrom('users').select('id').where(sql`lower(email)`, '=', email.trim().toLowerCase()).where('id', '!=', identity.user_id).executeTakeFirst();
            if (taken) throw new ScimFailure(409, 'Email has already been taken');
          }
          const changes = { ...(name !== undefined ? { name } : {}), ...(email !== undefined ? { email } : {}), ...(username !== undefined ? { username } : {}) };
          if (Object.keys(changes).length > 0) await updateUser(w, identity.user_id, changes, undefined);
        }
      } catch (error) {
        if (error instanceof DomainError) throw failed();
        throw error;
      }
      return c.body(null, 204, { 'Content-Type': SCIM_CONTENT_TYPE });
    }),
  )

  .delete(
    USER,
    documented({ summary: 'Removes a SAML user', auth: 'public', responses: { 204: null, ...SCIM_REFUSED } }),
    scimEndpoint(async (c) => {
      const group = await scimGroup(c);
      const identity = await identityOf(c, group.id);
      try {
        await deprovisionScimIdentity(writerFor(c, NOBODY), group.id, { externUid: identity.extern_uid, userId: identity.user_id });
      } catch (error) {
        if (error instanceof DomainError) throw new ScimFailure(404, `Resource ${c.req.param('id')} not found`);
        throw error;
      }
      return c.body(null, 204, { 'Content-Type': SCIM_CONTENT_TYPE });
    }),
  );

// ───────────────────────────── Extensions: SAML SSO and the SCIM token ─────────────────────────────

/**
 * GitLab does these in its UI (Groups::SamlProvidersController, Groups::ScimOauthController):
 * a top-level group on a plan with `group_saml`, its owners only. A group the caller may not
 * see is 404 as everywhere; the plan without the feature and a subgroup are 404 as the UI's
 * `render_404`; a visible group without the ability is 403.
 */
async function samlGroup(c: Context, auth: Auth) {
  const group = await userGroup(c, auth);
  if (!licensed(appContext(c).config.plan, 'group_saml') || group.row.parent_id !== null) throw notFound();
  if (!group.can('admin_group_saml')) throw forbidden();
  return group;
}

const samlShape = { enabled: optional(t.boolean()), sso_url: optional(t.string()), certificate_fingerprint: optional(t.string()) } satisfies Shape;

export const groupSamlRoutes = new Hono<AppEnv>()
  .put('/groups/:id/saml', documented({ summary: "Configure the group's SAML single sign-on (forgelog; GitLab does it in its UI)", params: samlShape, responses: { 200: { type: 'object' }, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, samlShape);
    const group = await samlGroup(c, w.auth);
    const { db } = appContext(c);
    await run(w, scim, group.row.id, { type: 'ConfigureSamlProvider', enabled: p.enabled, ssoUrl: p.sso_url, certificateFingerprint: p.certificate_fingerprint });
    return c.json(toSamlProvider((await findSamlProvider(db, group.row.id))!));
  })

  .post('/groups/:id/scim/token', documented({ summary: "Generate the group's SCIM token (forgelog; GitLab does it in its UI)", responses: { 201: { type: 'object' }, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const group = await samlGroup(c, w.auth);
    const { config } = appContext(c);
    const token = await generateScimToken(w, group.row.id);
    return c.json(toScimToken(`${config.externalUrl}${SCIM_PREFIX}/groups/${group.row.full_path}`, token), 201);
  });
