import { Hono, type Context } from 'hono';
import { EMAIL_EVENTS, EPIC_EVENT, type EmailEvent, type EventFlags, type NotificationSource, notificationSettings } from '../../domain/notification-settings.js';
import { licensed } from '../../domain/policy/licensed.js';
import { findNotificationSetting } from '../../projections/notification-settings/queries.js';
import { toGlobalNotificationSetting, toNotificationSetting } from '../entities/notification-settings.js';
import { requireUser, requireUserRow, requireWriter, writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { optional, params, t, type ParamDef, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { userGroup, userProject } from '../kernel/scope.js';
import { run } from '../../commands/kernel/run.js';

/**
 * GitLab's API::NotificationSettings: the caller's own settings, global and per group or
 * project. `new_epic` is EE's (EMAIL_EVENTS_MAPPING: global and groups), here on the plans
 * with epics; below them it is neither shown nor read.
 */

type SourceKind = 'global' | NotificationSource['type'];

/** NotificationSetting.email_events(source). */
function emailEvents(c: Context, kind: SourceKind): readonly EmailEvent[] {
  const epics = kind !== 'Project' && licensed(appContext(c).config.plan, 'epics');
  return epics ? [...EMAIL_EVENTS, EPIC_EVENT] : EMAIL_EVENTS;
}

/**
 * The PUT's parameters: `level` (a String: the model checks the enum), each event an
 * optional Boolean, and `notification_email` on the global setting.
 */
async function settingParams(c: Context, events: readonly EmailEvent[], global: boolean) {
  const shape: Record<string, ParamDef<string | boolean, false>> = { level: optional(t.string()) };
  if (global) shape.notification_email = optional(t.string());
  for (const event of events) shape[event] = optional(t.boolean());
  const given: Record<string, unknown> = await params(c, shape);
  const flags: EventFlags = {};
  for (const event of events) if (typeof given[event] === 'boolean') flags[event] = given[event];
  const text = (name: string) => (typeof given[name] === 'string' ? given[name] : undefined);
  return { level: text('level'), events: flags, notificationEmail: text('notification_email') };
}

/**
 * What the PUTs document. The handler builds its shape per request — `new_epic` only on a plan
 * with epics and not for a project, `notification_email` only globally — from these same
 * declarations (t.string() and t.boolean() are one schema each), so what it parses is always
 * among what is documented; the documentation lists every event and says where each applies.
 */
const eventDocs: Shape = Object.fromEntries(EMAIL_EVENTS.map((event) => [event, optional(t.boolean())]));
const sourceDoc = { level: optional(t.string()), ...eventDocs, [EPIC_EVENT]: optional(t.boolean()) } satisfies Shape;
const globalDoc = { ...sourceDoc, notification_email: optional(t.string()) } satisfies Shape;

async function resolve(c: Context, auth: Auth, kind: NotificationSource['type']): Promise<NotificationSource> {
  // find_source: the group or project as the caller may read it; 404 otherwise.
  const { row } = kind === 'Namespace' ? await userGroup(c, auth) : await userProject(c, auth);
  return { type: kind, id: row.id };
}

export const notificationSettingRoutes = new Hono<AppEnv>();

notificationSettingRoutes
  .get('/notification_settings', documented({ summary: 'Get global notification level settings and email, defaults to Participate', responses: { 200: 'GlobalNotificationSetting' } }), async (c) => {
    const auth = await requireUserRow(c);
    const setting = await findNotificationSetting(appContext(c).db, auth.user.id, null);
    return c.json(toGlobalNotificationSetting(setting, emailEvents(c, 'global'), auth.user.email));
  })
  .put('/notification_settings', documented({ summary: 'Update global notification level settings and email, defaults to Participate (new_epic: on plans with epics)', params: globalDoc, responses: { 200: 'GlobalNotificationSetting', 400: 'Error' } }), async (c) => {
    const auth = await requireUserRow(c);
    const events = emailEvents(c, 'global');
    const given = await settingParams(c, events, true);
    const { db } = appContext(c);
    const command = { type: 'UpdateNotificationSetting', source: null, ...given, ownedEmails: [auth.user.email] } as const;
    await run(writerFor(c, auth), notificationSettings, auth.user.id, command);
    // Users own one email, their primary one: notification_email can only be that.
    return c.json(toGlobalNotificationSetting(await findNotificationSetting(db, auth.user.id, null), events, auth.user.email));
  });

for (const [plural, kind] of [
  ['groups', 'Namespace'],
  ['projects', 'Project'],
] as const) {
  const path = `/${plural}/:id/notification_settings`;
  notificationSettingRoutes
    .get(path, documented({ summary: `Get ${plural === 'groups' ? 'group' : 'project'} level notification level settings, defaults to Global`, responses: { 200: 'NotificationSetting', ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const source = await resolve(c, auth, kind);
      const setting = await findNotificationSetting(appContext(c).db, auth.user.id, source);
      return c.json(toNotificationSetting(setting, emailEvents(c, kind)));
    })
    .put(path, documented({ summary: `Update ${plural === 'groups' ? 'group' : 'project'} level notification level settings, defaults to Global${plural === 'groups' ? ' (new_epic: on plans with epics)' : ' (new_epic: not for a project)'}`, params: sourceDoc, responses: { 200: 'NotificationSetting', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const events = emailEvents(c, kind);
      const given = await settingParams(c, events, false);
      const source = await resolve(c, w.auth, kind);
      const { db } = appContext(c);
      await run(w, notificationSettings, w.auth.user.id, { type: 'UpdateNotificationSetting', source, ...given });
      return c.json(toNotificationSetting(await findNotificationSetting(db, w.auth.user.id, source), events));
    });
}
