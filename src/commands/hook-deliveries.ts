import { randomUUID } from 'node:crypto';
import type { Db } from '../database/database.js';
import { HOOK_NAME_FLAG, SYSTEM_HOOK_SCOPES, gitlabEventHeader, type HookName } from '../domain/hooks/payloads.js';
import { HOOK_TRIGGERS, type HookMessage, type HookTrigger } from '../domain/hooks/triggers.js';
import { wildcardMatches } from '../domain/wildcard.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { HookRow } from '../projections/hooks/tables.js';
import type { IntegrationDeliveryRow } from '../projections/integrations/tables.js';
import { allowsLocal, hookToken } from './hooks.js';
import { hookFacts } from './hook-facts.js';
import { DELIVERIES_SIGNAL } from './integration-deliveries.js';
import type { CommandContext } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';

/**
 * Webhooks' outbound delivery, first half: for an event in the hook table
 * (src/domain/hooks/triggers.ts), the messages it makes go to every hook subscribed to their
 * scope — the project's hooks, the hooks of the project's groups and their ancestors (GitLab
 * EE's group hooks), the system hooks — as `pending` rows of `integration_deliveries` with
 * `hook_id` set; the integrations' sender posts them (src/commands/integration-delivery-sender.ts).
 * Idempotent: a row per (hook, event, seq) is unique, and the runner keeps a receipt per event.
 * Like the integrations' reactor it starts at the head of the log.
 */
type Triggers = { readonly [type: string]: HookTrigger<any> | undefined };

export function hookDeliveriesReactor(triggers: Triggers = HOOK_TRIGGERS, name = 'hook-deliveries'): Reactor {
  return {
    name,
    handles: Object.keys(triggers),
    startAt: 'head',
    async react(event: StoredEvent, ctx: CommandContext) {
      const trigger = triggers[event.type];
      if (!trigger) return;
      // Nothing to read when the instance has no hook at all.
      if (!(await ctx.db.selectFrom('hooks').select('id').limit(1).executeTakeFirst())) return;
      const messages = await trigger(event.data, await hookFacts(ctx, event));
      if (messages.length === 0) return;
      if ((await recordHookDeliveries(ctx, event, messages)) > 0) ctx.notifier.signal(DELIVERIES_SIGNAL);
    },
  };
}

export const hookDeliveries = hookDeliveriesReactor();

/** The hooks a message goes to, by id. */
async function subscribers(db: Db, message: HookMessage): Promise<HookRow[]> {
  if (message.name === 'system_hooks') return db.selectFrom('hooks').selectAll().where('kind', '=', 'system').orderBy('id').execute();
  const flag = HOOK_NAME_FLAG[message.name];
  const project = message.projectId === null ? undefined : await db.selectFrom('projects').select(['id', 'traversal_ids']).where('id', '=', message.projectId).executeTakeFirst();
  const groups = project?.traversal_ids ?? [];
  const rows = await db
    .selectFrom('hooks')
    .selectAll()
    .where(flag, '=', true)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'project'), eb('project_id', '=', message.projectId ?? -1)]),
        ...(groups.length > 0 ? [eb.and([eb('kind', '=', 'group'), eb('group_id', 'in', groups)])] : []),
        ...(SYSTEM_HOOK_SCOPES.includes(message.name) ? [eb('kind', '=', 'system')] : []),
      ]),
    )
    .orderBy('id')
    .execute();
  return rows.filter((hook) => branchMatches(hook, message));
}

/**
 * ActiveHookFilter (12.10): a push reaches a hook whose `push_events_branch_filter` is blank,
 * equal to the branch, or a wildcard matching it.
 */
function branchMatches(hook: HookRow, message: HookMessage): boolean {
  if (message.name !== 'push_hooks' || message.branch === undefined) return true;
  const filter = hook.push_events_branch_filter;
  if (filter === null || filter.trim() === '') return true;
  return filter === message.branch || (filter.includes('*') && wildcardMatches(filter, message.branch));
}

/** Records the event's deliveries; returns how many were new. */
async function recordHookDeliveries(ctx: CommandContext, event: StoredEvent, messages: readonly HookMessage[]): Promise<number> {
  const at = ctx.now().toISOString();
  const rows = [];
  for (const [seq, message] of messages.entries()) {
    for (const hook of await subscribers(ctx.db, message)) rows.push(deliveryRow(hook, message.name, message.projectId, event.eventId, event.type, seq, message.payload, at));
  }
  if (rows.length === 0) return 0;
  const inserted = await ctx.db
    .insertInto('integration_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['hook_id', 'event_id', 'seq']).where('hook_id', 'is not', null).doNothing())
    .returning('id')
    .execute();
  return inserted.length;
}

function deliveryRow(hook: HookRow, name: HookName, projectId: number | null, eventId: string, eventType: string, seq: number, payload: unknown, at: string) {
  return {
    hook_id: hook.id,
    integration_id: null,
    project_id: projectId,
    kind: `${hook.kind}_hook`,
    event_id: eventId,
    event_type: eventType,
    flag: name,
    seq,
    payload: JSON.stringify(JSON.stringify(payload)),
    status: 'pending' as const,
    next_attempt_at: at,
    created_at: at,
  };
}

/** What GitLab 12.10's GET /hooks/:id sends to the hook and answers. */
export const SYSTEM_HOOK_TEST_DATA = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
} as const;

/** GET /hooks/:id: the sample event, delivered to that hook through the sender. */
export async function recordSystemHookTest(ctx: CommandContext, hook: HookRow): Promise<void> {
  const at = ctx.now().toISOString();
  await ctx.db
    .insertInto('integration_deliveries')
    .values(deliveryRow(hook, 'system_hooks', null, randomUUID(), 'SystemHookTest', 0, SYSTEM_HOOK_TEST_DATA, at))
    .execute();
  ctx.notifier.signal(DELIVERIES_SIGNAL);
}

/** A DeliveryTarget of the sender (declared here too: the sender imports this module). */
type HookTarget =
  | { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: string; readonly allowLocal: boolean; readonly verifyTls: boolean }
  | { readonly refused: string };

/**
 * The sender's view of a hook's delivery (WebHookService#make_request, 12.10): the hook's URL,
 * `Content-Type: application/json`, `X-Gitlab-Event`, `X-Gitlab-Token` when the hook has one
 * (read from hook_secrets now, never stored with the delivery), TLS verified unless the hook
 * says otherwise; the SSRF guard's setting by the hook's kind.
 */
export async function hookTarget(db: Db, row: Pick<IntegrationDeliveryRow, 'hook_id' | 'flag' | 'payload'>): Promise<HookTarget> {
  const hook = row.hook_id === null ? undefined : await db.selectFrom('hooks').selectAll().where('id', '=', row.hook_id).executeTakeFirst();
  if (!hook) return { refused: 'the hook no longer exists' };
  const token = await hookToken(db, hook.id);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Gitlab-Event': gitlabEventHeader(row.flag as HookName, hook.kind === 'system'),
    ...(token !== null ? { 'X-Gitlab-Token': token.replace(/\r?\n/g, '') } : {}),
  };
  // The payload is kept as its JSON text (a jsonb string): jsonb would reorder GitLab's keys.
  const body = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
  return { url: hook.url, headers, body, allowLocal: await allowsLocal(db, hook.kind), verifyTls: hook.enable_ssl_verification };
}
