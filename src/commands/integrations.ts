import type { Db } from '../database/database.js';
import { type Flags, type KindSpec, type Properties, isSecretField } from '../domain/integrations/catalogue.js';
import { type IntegrationKey } from '../domain/integrations/decider.js';
import type { ProjectEvent } from '../domain/projects/events.js';
import type { StoredEvent } from '../eventstore/types.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { findIntegration } from '../projections/integrations/queries.js';
import { nextId } from './kernel/handler.js';
import { fingerprint, seal, unseal } from '../security/sealing.js';
import { blockedReason, type Resolver } from '../security/url-blocker.js';
import { run } from './kernel/run.js';
import { integrations } from '../domain/integrations/aggregate.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';


/**
 * The secrets of integrations never reach the event log, not even sealed: they are sealed
 * (AES-256-GCM, instance key `integrations`, made by migration 0024) into
 * `integration_secrets`, written in the command's own transaction — the command is built by
 * a function of that transaction, which the handler runs before deciding, so a refused or
 * failed command leaves no secret behind, and a committed one commits its secret with its
 * events. The event records the field's keyed fingerprint only.
 */
const KEY = 'integrations';
const context = (projectId: number, kind: string, field: string) => `${projectId}/${kind}/${field}`;

export interface IntegrationChange {
  readonly projectId: number;
  readonly kind: KindSpec;
  /** The fields sent (secret or not), as parsed. */
  readonly values: Readonly<Record<string, string | number | boolean>>;
  readonly flags: Partial<Flags>;
}

/** An existing integration's id, or a new one from the sequence (a concurrent first save keeps the first one's). */
async function idFor(db: Db, projectId: number, kind: string): Promise<number> {
  return (await findIntegration(db, projectId, kind))?.id ?? (await nextId(db, 'integrations_id_seq'));
}

/** The URL fields' refusals: the SSRF guard after DNS resolution, unless the instance allows local requests. */
async function urlErrors(db: Db, change: IntegrationChange, resolve?: Resolver): Promise<Record<string, string[]>> {
  const errors: Record<string, string[]> = {};
  const urls = change.kind.fields.filter((f) => f.url && typeof change.values[f.name] === 'string' && (change.values[f.name] as string).trim() !== '');
  if (urls.length === 0) return errors;
  const allowLocal = (await currentSettings(db)).allow_local_requests_from_web_hooks_and_services === true;
  for (const field of urls) {
    const reason = await blockedReason((change.values[field.name] as string).trim(), { allowLocal, ...(resolve ? { resolve } : {}) });
    if (reason) errors[field.name] = [`is blocked: ${reason}`];
  }
  return errors;
}

/** PUT /projects/:id/services/<slug>: create or change, active. */
export async function saveIntegration(w: Writer, change: IntegrationChange, resolve?: Resolver) {
  const { projectId, kind } = change;
  const properties: Record<string, string | number | boolean> = {};
  const secretValues: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(change.values)) {
    if (!isSecretField(name)) properties[name] = value;
    else secretValues[name] = String(value).trim() === '' ? null : String(value);
  }
  const secrets: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(secretValues)) secrets[name] = value === null ? null : await fingerprint(w.ctx.db, KEY, context(projectId, kind.slug, name), value);
  const errors = await urlErrors(w.ctx.db, change, resolve);
  const newId = await idFor(w.ctx.db, projectId, kind.slug);
  return run(
    w,
    integrations,
    { projectId, kind: kind.slug },
    async (trx) => {
      for (const [name, value] of Object.entries(secretValues)) await storeSecret(trx, projectId, kind.slug, name, value);
      return { type: 'SaveIntegration', newId, properties: properties as Properties, flags: change.flags, secrets, urlErrors: errors };
    },
  );
}

/** DELETE /projects/:id/services/<slug>: inactive, properties nil, secrets deleted. */
export async function disableIntegration(w: Writer, key: IntegrationKey) {
  const newId = await idFor(w.ctx.db, key.projectId, key.kind);
  return run(
    w,
    integrations,
    key,
    async (trx) => {
      await trx.deleteFrom('integration_secrets').where('project_id', '=', key.projectId).where('kind', '=', key.kind).execute();
      return { type: 'DisableIntegration', newId };
    },
  );
}

async function storeSecret(trx: Db, projectId: number, kind: string, field: string, value: string | null) {
  const where = trx.deleteFrom('integration_secrets').where('project_id', '=', projectId).where('kind', '=', kind).where('field', '=', field);
  if (value === null) {
    await where.execute();
    return;
  }
  const sealed = await seal(trx, KEY, context(projectId, kind, field), value);
  await trx
    .insertInto('integration_secrets')
    .values({ project_id: projectId, kind, field, sealed })
    .onConflict((oc) => oc.columns(['project_id', 'kind', 'field']).doUpdateSet({ sealed }))
    .execute();
}

/** An integration's secrets in clear (GET shows `webhook`; the delivery reactor reads where it posts). */
export async function integrationSecrets(db: Db, projectId: number, kind: string): Promise<Record<string, string>> {
  const rows = await db.selectFrom('integration_secrets').select(['field', 'sealed']).where('project_id', '=', projectId).where('kind', '=', kind).execute();
  const opened: Record<string, string> = {};
  for (const row of rows) opened[row.field] = await unseal(db, KEY, context(projectId, kind, row.field), row.sealed);
  return opened;
}

type ProjectDeleted = Extract<ProjectEvent, { type: 'ProjectDeleted' }>;

/**
 * A deleted project's integration secrets go with it (its integrations' rows go with the
 * projection). Not a projection: the secrets are no read table, and a rebuild must never
 * touch them. Idempotent: deleting what is gone deletes nothing.
 */
export const integrationSecretsRemovalReactor: Reactor = {
  name: 'integration-secrets-removal',
  handles: ['ProjectDeleted'] satisfies ProjectDeleted['type'][],
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as ProjectDeleted;
    await ctx.db.deleteFrom('integration_secrets').where('project_id', '=', event.data.id).execute();
  },
};
