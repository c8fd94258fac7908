import { z } from 'zod';
import { type Decider, unhandled } from './decider.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { conflict, invalid, recordNotFound } from './errors.js';
import { defineAggregate } from './aggregate.js';

/**
 * Broadcast messages (GitLab's BroadcastMessage, administered through API::BroadcastMessages):
 * one stream per message, `broadcast-message-<id>`. Whether a message is active is not
 * state: it is read against the clock when the message is shown.
 */

// ───────────────────────────── Events ─────────────────────────────

const fields = {
  message: z.string(),
  starts_at: z.iso.datetime(),
  ends_at: z.iso.datetime(),
  /** Background colour; GitLab allows it blank (and an explicit null). */
  color: z.string().nullable(),
  /** Foreground colour. */
  font: z.string().nullable(),
  target_path: z.string().nullable(),
};

export const broadcastMessageEvents = {
  BroadcastMessageCreated: z.strictObject({ id: z.int(), ...fields }),
  /** Only the fields that changed. */
  BroadcastMessageUpdated: z.strictObject({ id: z.int(), changes: z.strictObject(fields).partial() }),
  BroadcastMessageDeleted: z.strictObject({ id: z.int() }),
} satisfies EventSchemas;

export type BroadcastMessageEvent = EventOf<typeof broadcastMessageEvents>;

export const broadcastMessageStreamId = (id: number) => `broadcast-message-${id}`;

export const broadcastMessageEventIndex = (event: BroadcastMessageEvent): FeedIndex => ({ targetType: 'BroadcastMessage', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

export interface BroadcastMessageRecord {
  readonly message: string;
  readonly starts_at: string;
  readonly ends_at: string;
  readonly color: string | null;
  readonly font: string | null;
  readonly target_path: string | null;
}

export interface BroadcastMessageState {
  readonly id: number;
  /** null before creation and after deletion. */
  readonly record: BroadcastMessageRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** A record's attributes before validation: any of them may be null. */
export type Candidate = { readonly [K in keyof BroadcastMessageRecord]: BroadcastMessageRecord[K] | null };

/** GitLab's defaults of a new message (`default_value_for :color` / `:font`). */
export const DEFAULT_COLOR = '#E75E40';
export const DEFAULT_FONT = '#FFFFFF';

/**
 * The model's attributes as the route hands them over (`declared_params`). Times are ISO 8601
 * strings in UTC; the route resolves the defaults (now, now + 1 hour) by the command clock.
 * On update, an absent attribute is kept and null is what an explicit null asks (refused for
 * the required ones).
 */
export type BroadcastMessageCommand =
  | { readonly type: 'CreateBroadcastMessage'; readonly attributes: BroadcastMessageRecord }
  | { readonly type: 'UpdateBroadcastMessage'; readonly attributes: Partial<Candidate> }
  | { readonly type: 'DeleteBroadcastMessage' };

// ───────────────────────────── Validation ─────────────────────────────

/** Rails' `blank?`: nil, or a string of whitespace only. */
const blank = (value: string | null) => value === null || /^\s*$/u.test(value);

/** GitLab's ColorValidator: `/\A\#[0-9A-Fa-f]{3}{1,2}+\Z/` (`\Z` lets one final newline through). */
const COLOR = /^#(?:[0-9A-Fa-f]{3}){1,2}\n?$/;


/** BroadcastMessage's validations, in the order the model declares them. */
function validate(record: Candidate): BroadcastMessageRecord {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (blank(record.message)) add('message', "can't be blank");
  if (record.starts_at === null) add('starts_at', "can't be blank");
  if (record.ends_at === null) add('ends_at', "can't be blank");
  // `allow_blank: true`: a blank colour is not checked.
  if (!blank(record.color) && !COLOR.test(record.color!)) add('color', 'must be a valid color code');
  if (!blank(record.font) && !COLOR.test(record.font!)) add('font', 'must be a valid color code');
  if (Object.keys(errors).length > 0) throw invalid(errors);
  return record as BroadcastMessageRecord;
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): BroadcastMessageState => ({ id, record: null });

function evolve(state: BroadcastMessageState, event: BroadcastMessageEvent): BroadcastMessageState {
  switch (event.type) {
    case 'BroadcastMessageCreated': {
      const { id: _id, ...record } = event.data;
      return { id: state.id, record };
    }
    case 'BroadcastMessageUpdated':
      return state.record ? { id: state.id, record: { ...state.record, ...event.data.changes } } : state;
    case 'BroadcastMessageDeleted':
      return { id: state.id, record: null };
    default:
      return unhandled(event);
  }
}

function decide(command: BroadcastMessageCommand, state: BroadcastMessageState): BroadcastMessageEvent[] {
  const { id } = state;
  switch (command.type) {
    case 'CreateBroadcastMessage': {
      if (state.record) throw conflict('Broadcast message already exists');
      const record = validate(command.attributes);
      return [{ type: 'BroadcastMessageCreated', data: { id, ...record } }];
    }
    case 'UpdateBroadcastMessage': {
      const current = state.record;
      if (!current) throw recordNotFound('BroadcastMessage');
      const asked = definedOnly(command.attributes);
      validate({ ...current, ...asked });
      const changes = Object.fromEntries(
        Object.entries(asked).filter(([key, value]) => current[key as keyof BroadcastMessageRecord] !== value),
      ) as Partial<BroadcastMessageRecord>;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'BroadcastMessageUpdated', data: { id, changes } }];
    }
    case 'DeleteBroadcastMessage':
      if (!state.record) throw recordNotFound('BroadcastMessage');
      return [{ type: 'BroadcastMessageDeleted', data: { id } }];
    default:
      return unhandled(command);
  }
}

const definedOnly = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

export const broadcastMessageDecider: Decider<BroadcastMessageCommand, BroadcastMessageEvent, BroadcastMessageState, number> = {
  initialState,
  evolve,
  decide,
};

/** GitLab's `active?`: started (now ≥ starts_at) and not ended (ends_at ≥ now). */
export const isActive = (startsAt: Date, endsAt: Date, now: Date) => startsAt.getTime() <= now.getTime() && endsAt.getTime() >= now.getTime();

// ───────────────────────────── The aggregate ─────────────────────────────

/** One broadcast message (src/domain/broadcast-messages.ts); ids come from broadcast_messages_id_seq. */
export const broadcastMessages = defineAggregate({
  name: 'broadcast_messages',
  streamId: broadcastMessageStreamId,
  events: broadcastMessageEvents,
  decider: broadcastMessageDecider,
  index: broadcastMessageEventIndex,
  idSequence: 'broadcast_messages_id_seq',
});
