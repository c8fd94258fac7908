import type { Db } from '../database/database.js';
import { kindOf, type Properties } from '../domain/integrations/catalogue.js';
import { renderChat, type Payload } from '../domain/integrations/chat-payloads.js';
import { DELIVERY_TRIGGERS, chatWouldNotify, type DeliveryTrigger, type MessageFacts } from '../domain/integrations/deliveries.js';
import type { StoredEvent } from '../eventstore/types.js';
import { avatarUrl } from '../projections/users/avatar.js';
import { issueConfidentialAt } from './hook-facts.js';
import type { CommandContext } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';

/** The topic the reactor signals (Notifier.signal) when it recorded something to send. */
export const DELIVERIES_SIGNAL = 'integration-deliveries';

type Triggers = { readonly [type: string]: DeliveryTrigger<any> | undefined };

/**
 * Integrations' outbound delivery, first half: for an event in the delivery table
 * (src/domain/integrations/deliveries.ts), every active integration of its project with the
 * event's flag on gets its requests recorded in `integration_deliveries` — `pending` for a
 * kind that sends over HTTP (the catalogue's `chat` column; the sender posts them), `recorded`
 * for the others (kept, not sent). The integrations read table is inline, so it is current
 * up to the event. Idempotent: a row per (integration, event, seq) is unique, and the runner
 * keeps a receipt per event.
 *
 * It starts at the head of the log: deploying it (or a new row in the table) notifies about
 * what happens next, never replays history into chats.
 */
export function integrationDeliveriesReactor(triggers: Triggers, name = 'integration-deliveries'): Reactor {
  return {
    name,
    handles: Object.keys(triggers),
    startAt: 'head',
    async react(event: StoredEvent, ctx: CommandContext) {
      const trigger = triggers[event.type];
      if (!trigger) return;
      const pending = await recordDeliveries(ctx, event, trigger);
      if (pending > 0) ctx.notifier.signal(DELIVERIES_SIGNAL);
    },
  };
}

/** The production reactor: the production table (empty until pushes exist). */
export const integrationDeliveries = integrationDeliveriesReactor(DELIVERY_TRIGGERS);

interface Row {
  integration_id: number;
  project_id: number;
  kind: string;
  event_id: string;
  event_type: string;
  flag: string;
  seq: number;
  payload: string;
  status: 'pending' | 'recorded';
  next_attempt_at: string | null;
  created_at: string;
}

/** The trigger's flag, or its confidential flag when the event's issue was confidential at the event (GitLab decides when it builds the hook data). */
async function flagOf(db: Db, trigger: DeliveryTrigger<unknown>, event: StoredEvent) {
  const issueId = trigger.confidential?.issueId(event.data) ?? null;
  if (issueId === null) return trigger.flag;
  return (await issueConfidentialAt(db, issueId, event)) ? trigger.confidential!.flag : trigger.flag;
}

/** Records the event's deliveries; returns how many are to be sent. */
async function recordDeliveries(ctx: CommandContext, event: StoredEvent, trigger: DeliveryTrigger<unknown>): Promise<number> {
  const { db } = ctx;
  const projectId = trigger.projectId(event.data);
  const flag = await flagOf(db, trigger, event);
  const subscribed = await db
    .selectFrom('integrations')
    .select(['id', 'kind', 'properties'])
    .where('project_id', '=', projectId)
    .where('active', '=', true)
    .where(flag, '=', true)
    .orderBy('id')
    .execute();
  if (subscribed.length === 0) return 0;
  const facts = await messageFacts(ctx, projectId, event.actorId);
  if (!facts) return 0; // the project is gone
  const message = trigger.message(event.data, facts.message);
  if (!message) return 0;
  const at = ctx.now().toISOString();
  const rows: Row[] = [];
  const base = { project_id: projectId, event_id: event.eventId, event_type: event.type, flag, created_at: at };
  for (const integration of subscribed) {
    const kind = kindOf(integration.kind);
    if (!kind) continue;
    const properties = integration.properties as Properties;
    if (!kind.chat) {
      // Not sent: what it would have been told is kept, for the operator and for later senders.
      rows.push({ ...base, integration_id: integration.id, kind: kind.slug, seq: 0, payload: JSON.stringify(message), status: 'recorded', next_attempt_at: null });
      continue;
    }
    if (!chatWouldNotify(message, properties, facts.branches)) continue;
    renderChat(kind.chat, message, flag, properties).forEach((payload: Payload, seq) =>
      rows.push({ ...base, integration_id: integration.id, kind: kind.slug, seq, payload: JSON.stringify(payload), status: 'pending', next_attempt_at: at }),
    );
  }
  if (rows.length === 0) return 0;
  const inserted = await db
    .insertInto('integration_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['integration_id', 'event_id', 'seq']).doNothing())
    .returning('status')
    .execute();
  return inserted.filter((r) => r.status === 'pending').length;
}

/** The project and actor as the message shows them now, and what the branch rule reads. */
async function messageFacts(ctx: CommandContext, projectId: number, actorId: number | null | undefined) {
  const project = await ctx.db
    .selectFrom('projects')
    .select(['id', 'name_with_namespace', 'path_with_namespace', 'default_branch'])
    .where('id', '=', projectId)
    .where('pending_delete', '=', false)
    .executeTakeFirst();
  if (!project) return undefined;
  const user = typeof actorId === 'number' ? await ctx.db.selectFrom('users').select(['name', 'username', 'avatar_url', 'email']).where('id', '=', actorId).executeTakeFirst() : undefined;
  const base = ctx.externalUrl?.() ?? '';
  const message: MessageFacts = {
    project: { id: project.id, name: project.name_with_namespace, pathWithNamespace: project.path_with_namespace, webUrl: `${base}/${project.path_with_namespace}` },
    user: user ? { name: user.name, username: user.username, avatarUrl: avatarUrl(user, base) } : null,
  };
  return { message, branches: { defaultBranch: project.default_branch, protectedBranches: await protectedBranchNames(ctx.db, projectId) } };
}

const protectedBranchNames = async (db: Db, projectId: number) =>
  (await db.selectFrom('protected_branches').select('name').where('project_id', '=', projectId).execute()).map((r) => r.name);

/** Deliveries, integrations' and webhooks' (`hook_id`), newest first (`forgelog deliveries`). */
export async function recentDeliveries(db: Db, options: { limit?: number; status?: string } = {}) {
  let query = db
    .selectFrom('integration_deliveries')
    .select(['id', 'project_id', 'hook_id', 'kind', 'event_type', 'flag', 'seq', 'status', 'attempts', 'next_attempt_at', 'last_attempt_at', 'response_status', 'last_error', 'created_at'])
    .orderBy('id', 'desc')
    .limit(options.limit ?? 20);
  if (options.status) query = query.where('status', '=', options.status as 'pending');
  return query.execute();
}
