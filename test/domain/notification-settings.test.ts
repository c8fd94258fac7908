import { describe, expect, it } from 'vitest';
import {
  type NotificationSettingCommand,
  type NotificationSettingEvent,
  type NotificationSource,
  notificationSettingsDecider,
  notificationSettingsStreamId,
  settingOf,
} from '../../src/domain/notification-settings.js';
import { deciderSpec, rejected } from '../support/decider.js';

// ───────────────────────────── given / when / then ─────────────────────────────

const { on } = deciderSpec(notificationSettingsDecider);

const USER = 4;
const G: NotificationSource = { type: 'Namespace', id: 7 };
const P: NotificationSource = { type: 'Project', id: 9 };
const OWNED = ['ann@example.com'];

const update = (source: NotificationSource | null, extra: Partial<NotificationSettingCommand> = {}): NotificationSettingCommand => ({
  type: 'UpdateNotificationSetting',
  source,
  level: undefined,
  events: {},
  ...(source === null ? { ownedEmails: OWNED } : {}),
  ...extra,
});
const changed = (source: NotificationSource | null, level: string, events: Record<string, boolean> = {}): NotificationSettingEvent =>
  ({
    type: 'NotificationSettingChanged',
    data: { user_id: USER, source_type: source?.type ?? null, source_id: source?.id ?? null, level, events },
  }) as NotificationSettingEvent;

describe('notification settings decider', () => {
  it('names one stream per user', () => {
    expect(notificationSettingsStreamId(USER)).toBe('notification-settings-4');
  });

  it('starts the global setting at participating and a source at global (GitLab defaults)', () => {
    const { state } = on(USER).given();
    expect(settingOf(state, null)).toEqual({ level: 'participating', events: {} });
    expect(settingOf(state, G)).toEqual({ level: 'global', events: {} });
  });

  it.each(['disabled', 'participating', 'watch', 'global', 'mention', 'custom'])('sets the level %s on a source', (level) => {
    on(USER).given().when(update(P, { level })).then(level === 'global' ? [] : [changed(P, level)]);
  });

  it('sets the global level and keeps each source apart', () => {
    on(USER).given(changed(G, 'watch')).when(update(null, { level: 'mention' })).then([changed(null, 'mention')]);
    const state = on(USER).given(changed(G, 'watch'), changed(null, 'disabled')).state;
    expect(settingOf(state, G).level).toBe('watch');
    expect(settingOf(state, P).level).toBe('global');
    expect(settingOf(state, null).level).toBe('disabled');
  });

  it('records the flags set so far, whatever the level, and merges later ones', () => {
    on(USER)
      .given(changed(P, 'custom', { new_note: true }))
      .when(update(P, { level: 'watch', events: { new_issue: false } }))
      .then([changed(P, 'watch', { new_note: true, new_issue: false })]);
  });

  it('appends nothing when nothing changes', () => {
    on(USER).given(changed(P, 'custom', { new_note: true })).when(update(P, { level: 'custom', events: { new_note: true } })).then([]);
    on(USER).given().when(update(null, { notificationEmail: 'ann@example.com' })).then([]);
  });

  it("refuses a level outside the enum with Rails' ArgumentError message", () => {
    on(USER).given().when(update(P, { level: 'loud' })).then(rejected('bad_request', { text: "'loud' is not a valid level" }));
    on(USER).given().when(update(G, { level: 'Watch' })).then(rejected('bad_request', { text: "'Watch' is not a valid level" }));
  });

  it("refuses a blank level as the model's presence validation", () => {
    on(USER).given().when(update(G, { level: '' })).then(rejected('invalid', { fields: { level: ["can't be blank"] } }));
  });

  it('accepts the primary email as notification_email', () => {
    on(USER).given().when(update(null, { level: 'watch', notificationEmail: 'ann@example.com' })).then([changed(null, 'watch')]);
  });

  it.each([
    ['bob@example.com', ['is not an email you own']],
    ['ANN@example.com', ['is not an email you own']],
    ['not-an-email', ['is invalid', 'is not an email you own']],
    ['', ["can't be blank", 'is invalid', 'is not an email you own']],
  ])('refuses the notification_email %j with the User model errors', (email, messages) => {
    on(USER)
      .given()
      .when(update(null, { level: 'watch', notificationEmail: email }))
      .then(rejected('invalid', { fields: { notification_email: messages } }));
  });

  it('checks the level name before the email, and the email before a blank level (GitLab order)', () => {
    on(USER).given().when(update(null, { level: 'loud', notificationEmail: 'x' })).then(rejected('bad_request', { text: "'loud' is not a valid level" }));
    on(USER)
      .given()
      .when(update(null, { level: '', notificationEmail: 'bob@example.com' }))
      .then(rejected('invalid', { fields: { notification_email: ['is not an email you own'] } }));
  });

  it('ignores notification_email on a source setting', () => {
    on(USER).given().when(update(G, { level: 'watch', notificationEmail: 'bob@example.com' })).then([changed(G, 'watch')]);
  });
});
