import type { Db } from '../database/database.js';
import { hooks } from '../domain/hooks/aggregate.js';
import type { HookAttributes, HookFlag, HookKind } from '../domain/hooks/decider.js';
import type { StoredEvent } from '../eventstore/types.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { fingerprint, seal, unseal } from '../security/sealing.js';
import { blockedReason, type Resolver } from '../security/url-blocker.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';
import { newId, run } from './kernel/run.js';

/**
 * A hook's token never reaches the event log: it is sealed (AES-256-GCM, instance key
 * `hooks`, made by migration 0064) into `hook_secrets` in the command's own transaction, as
 * integrations seal theirs (src/commands/integrations.ts); the event records its keyed
 * fingerprint. The URL is no secret here: GitLab's API answers it.
 */
const KEY = 'hooks';
const context = (hookId: number) => `hook/${hookId}/token`;

/** What a route parsed: the attributes sent, the token in clear. */
export interface HookInput {
  readonly url?: string;
  readonly flags: Partial<Record<HookFlag, boolean>>;
  readonly pushEventsBranchFilter?: string;
  readonly enableSslVerification?: boolean;
  readonly token?: string;
}

/**
 * The public URL validation at save: the SSRF guard after DNS resolution, unless the instance
 * allows local requests — `allow_local_requests_from_system_hooks` for a system hook,
 * `allow_local_requests_from_web_hooks_and_services` for the others (WebHook#allow_local_requests?).
 */
export async function allowsLocal(db: Db, kind: HookKind): Promise<boolean> {
  const settings = await currentSettings(db);
  return (kind === 'system' ? settings.allow_local_requests_from_system_hooks : settings.allow_local_requests_from_web_hooks_and_services) === true;
}

async function attributes(db: Db, kind: HookKind, input: HookInput, print: (token: string) => Promise<string>, resolve?: Resolver): Promise<HookAttributes> {
  const url = input.url?.trim();
  const refused = url ? await blockedReason(url, { allowLocal: await allowsLocal(db, kind), ...(resolve ? { resolve } : {}) }) : null;
  const token = input.token;
  return {
    ...(input.url !== undefined ? { url: input.url } : {}),
    flags: input.flags,
    ...(input.pushEventsBranchFilter !== undefined ? { pushEventsBranchFilter: input.pushEventsBranchFilter } : {}),
    ...(input.enableSslVerification !== undefined ? { enableSslVerification: input.enableSslVerification } : {}),
    ...(token !== undefined ? { token: token === '' ? null : await print(token), tokenInvalid: token.includes('\n') } : {}),
    urlErrors: refused ? [`is blocked: ${refused}`] : [],
  };
}

async function storeToken(trx: Db, hookId: number, token: string | undefined) {
  if (token === undefined) return;
  if (token === '') {
    await trx.deleteFrom('hook_secrets').where('hook_id', '=', hookId).execute();
    return;
  }
  const sealed = await seal(trx, KEY, context(hookId), token);
  await trx
    .insertInto('hook_secrets')
    .values({ hook_id: hookId, sealed })
    .onConflict((oc) => oc.column('hook_id').doUpdateSet({ sealed }))
    .execute();
}

/** POST /projects/:id/hooks, /groups/:id/hooks, /hooks. */
export async function createHook(w: Writer, owner: { kind: HookKind; projectId: number | null; groupId: number | null }, input: HookInput, resolve?: Resolver) {
  const db = w.ctx.db;
  // Read before the transaction (the guard resolves names; the embedded database has one connection).
  const id = await newId(w, hooks);
  const attrs = await attributes(db, owner.kind, input, (token) => fingerprint(db, KEY, context(id), token), resolve);
  const result = await run(
    w,
    hooks,
    id,
    async (trx) => {
      await storeToken(trx, id, input.token);
      return { type: 'CreateHook', ...owner, ...attrs };
    },
    { newStream: true },
  );
  return { ...result, id };
}

/** PUT /projects/:id/hooks/:hook_id, /groups/:id/hooks/:hook_id. */
export async function updateHook(w: Writer, hook: { id: number; kind: HookKind }, input: HookInput, resolve?: Resolver) {
  const db = w.ctx.db;
  const attrs = await attributes(db, hook.kind, input, (token) => fingerprint(db, KEY, context(hook.id), token), resolve);
  return run(w, hooks, hook.id, async (trx) => {
    await storeToken(trx, hook.id, input.token);
    return { type: 'UpdateHook', ...attrs };
  });
}

/** DELETE: the hook and its token. */
export async function deleteHook(w: Writer, hookId: number) {
  return run(w, hooks, hookId, async (trx) => {
    await trx.deleteFrom('hook_secrets').where('hook_id', '=', hookId).execute();
    return { type: 'DeleteHook' };
  });
}

/** A hook's token in clear (X-Gitlab-Token), or null. */
export async function hookToken(db: Db, hookId: number): Promise<string | null> {
  const row = await db.selectFrom('hook_secrets').select('sealed').where('hook_id', '=', hookId).executeTakeFirst();
  return row ? unseal(db, KEY, context(hookId), row.sealed) : null;
}

/**
 * A deleted project's or group's hooks go with the projection; their tokens go here. Not a
 * projection: the secrets are no read table. Idempotent: a token whose hook is gone is deleted.
 */
export const hookSecretsRemovalReactor: Reactor = {
  name: 'hook-secrets-removal',
  handles: ['ProjectDeleted', 'GroupDeleted'],
  async react(_event: StoredEvent, ctx: CommandContext) {
    await ctx.db
      .deleteFrom('hook_secrets')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('hooks').select('hooks.id').whereRef('hooks.id', '=', 'hook_secrets.hook_id'))))
      .execute();
  },
};
