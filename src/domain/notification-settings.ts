import { z } from 'zod';
import type { Decider } from './decider.js';
import type { EventOf, EventSchemas } from './events.js';
import { invalid, serviceError } from './errors.js';
import { defineAggregate } from './aggregate.js';

/**
 * One user's notification settings: the global one and one per group or project, as
 * GitLab's NotificationSetting rows (`source` nil for the global setting). One aggregate per
 * user, stream `notification-settings-<userId>`: every setting is the user's own, no
 * decision looks across users, and a user's few settings fold into a small state.
 */

// ───────────────────────────── Vocabulary ─────────────────────────────

/** NotificationSetting's `level` enum. */
export const NOTIFICATION_LEVELS = ['disabled', 'participating', 'watch', 'global', 'mention', 'custom'] as const;
export type NotificationLevel = (typeof NOTIFICATION_LEVELS)[number];

/** NotificationSetting::EMAIL_EVENTS (GitLab 12), in its order. */
export const EMAIL_EVENTS = [
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'issue_due',
  'new_merge_request',
  'push_to_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'success_pipeline',
] as const;

/** EE's EMAIL_EVENTS_MAPPING: epics are a group's, so the global and group settings have `new_epic`. */
export const EPIC_EVENT = 'new_epic';

const ALL_EVENTS = [...EMAIL_EVENTS, EPIC_EVENT] as const;
export type EmailEvent = (typeof ALL_EVENTS)[number];
/** The flags set so far; a flag never set is absent (GitLab's nil). */
export type EventFlags = Partial<Record<EmailEvent, boolean>>;

/** A group ('Namespace') or project a setting is for; null for the global setting. */
export interface NotificationSource {
  readonly type: 'Namespace' | 'Project';
  readonly id: number;
}

export interface NotificationSetting {
  readonly level: NotificationLevel;
  readonly events: EventFlags;
}

/** GitLab: the global setting starts at `participating` (User::DEFAULT_NOTIFICATION_LEVEL), a source's at `global`. */
export const defaultSetting = (source: NotificationSource | null): NotificationSetting => ({ level: source ? 'global' : 'participating', events: {} });

// ───────────────────────────── Events ─────────────────────────────

export const notificationSettingEvents = {
  /** The setting as it now is: the level and every flag set so far. */
  NotificationSettingChanged: z.strictObject({
    user_id: z.int(),
    source_type: z.enum(['Namespace', 'Project']).nullable(),
    source_id: z.int().nullable(),
    level: z.enum(NOTIFICATION_LEVELS),
    events: z.partialRecord(z.enum(ALL_EVENTS), z.boolean()),
  }),
} satisfies EventSchemas;

export type NotificationSettingEvent = EventOf<typeof notificationSettingEvents>;

export const notificationSettingsStreamId = (userId: number) => `notification-settings-${userId}`;

// ───────────────────────────── State ─────────────────────────────

export interface NotificationSettingsState {
  readonly userId: number;
  /** By `sourceKey`. */
  readonly settings: ReadonlyMap<string, NotificationSetting>;
}

const sourceKey = (source: NotificationSource | null) => (source ? `${source.type}:${source.id}` : 'global');

export const settingOf = (state: NotificationSettingsState, source: NotificationSource | null): NotificationSetting =>
  state.settings.get(sourceKey(source)) ?? defaultSetting(source);

// ───────────────────────────── Commands ─────────────────────────────

export interface UpdateNotificationSetting {
  readonly type: 'UpdateNotificationSetting';
  readonly source: NotificationSource | null;
  /** As given: validated here against the enum. */
  readonly level: string | undefined;
  readonly events: EventFlags;
  /** The global setting's `notification_email`, as given; undefined leaves it. */
  readonly notificationEmail?: string | undefined;
  /** The user's emails (the primary first); what `notification_email` must be one of. */
  readonly ownedEmails?: readonly string[];
}

/** The one command: a PUT of a setting (global or a source's) with what it was given. */
export type NotificationSettingCommand = UpdateNotificationSetting;

// ───────────────────────────── Validation ─────────────────────────────

/**
 * Rails' enum setter: a name outside the enum raises ArgumentError, which the API renders
 * as 400 `'x' is not a valid level`; a blank one sets nil (undefined here), which
 * `validates :level, presence: true` refuses after the user's own errors.
 */
function checkLevel(level: string | undefined): NotificationLevel | undefined {
  if (level === undefined || level.trim() === '') return undefined;
  if (!(NOTIFICATION_LEVELS as readonly string[]).includes(level)) throw serviceError(`'${level}' is not a valid level`);
  return level as NotificationLevel;
}

/** Devise.email_regexp, which User's `devise_email` validation uses. */
const DEVISE_EMAIL = /^[^@\s]+@[^@\s]+$/;

/**
 * GitLab 12's User validations of notification_email, in their order: presence, the email
 * format (skipped when it is the primary email), and `owns_notification_email` (one of
 * `all_emails`, compared as given: emails are stored downcased).
 */
function checkNotificationEmail(email: string, owned: readonly string[]) {
  if (email === owned[0]) return;
  const messages: string[] = [];
  if (email.trim() === '') messages.push("can't be blank");
  if (!DEVISE_EMAIL.test(email)) messages.push('is invalid');
  if (!owned.includes(email)) messages.push('is not an email you own');
  if (messages.length > 0) throw invalid({ notification_email: messages });
}

const sameFlags = (a: EventFlags, b: EventFlags) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as EmailEvent[]);
  return [...keys].every((key) => a[key] === b[key]);
};

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (userId: number): NotificationSettingsState => ({ userId, settings: new Map() });

function evolve(state: NotificationSettingsState, event: NotificationSettingEvent): NotificationSettingsState {
  const { source_type, source_id, level, events } = event.data;
  const source = source_type !== null && source_id !== null ? { type: source_type, id: source_id } : null;
  const settings = new Map(state.settings);
  settings.set(sourceKey(source), { level, events });
  return { ...state, settings };
}

function decide(command: NotificationSettingCommand, state: NotificationSettingsState): NotificationSettingEvent[] {
  const { source } = command;
  // GitLab's order: the level's ArgumentError is raised before the user's errors are rendered.
  const level = checkLevel(command.level);
  if (source === null && command.notificationEmail !== undefined) checkNotificationEmail(command.notificationEmail, command.ownedEmails ?? []);
  if (command.level !== undefined && level === undefined) throw invalid({ level: ["can't be blank"] });
  const before = settingOf(state, source);
  const after: NotificationSetting = { level: level ?? before.level, events: { ...before.events, ...command.events } };
  if (after.level === before.level && sameFlags(after.events, before.events)) return [];
  const data = { user_id: state.userId, source_type: source?.type ?? null, source_id: source?.id ?? null, level: after.level, events: after.events };
  return [{ type: 'NotificationSettingChanged', data }];
}

export const notificationSettingsDecider: Decider<NotificationSettingCommand, NotificationSettingEvent, NotificationSettingsState, number> = {
  initialState,
  evolve,
  decide,
};

// ───────────────────────────── The aggregate ─────────────────────────────

/** One user's notification settings, global and per group or project (src/domain/notification-settings.ts). */
export const notificationSettings = defineAggregate({
  name: 'notification_settings',
  streamId: notificationSettingsStreamId,
  events: notificationSettingEvents,
  decider: notificationSettingsDecider,
});
