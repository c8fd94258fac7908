import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationSettingsProjector } from '../../src/projections/notification-settings/projector.js';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
type User = { user: any; token: string };
let owner: User;
let pool: User[];

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  [owner, ...pool] = await Promise.all([api.createUser(), ...[1, 2, 3, 4, 5, 6].map(() => api.createUser())]);
});
afterAll(() => api.close());

const EVENTS = [
  'new_note', 'new_issue', 'reopen_issue', 'close_issue', 'reassign_issue', 'issue_due', 'new_merge_request', 'push_to_merge_request',
  'reopen_merge_request', 'close_merge_request', 'reassign_merge_request', 'merge_merge_request', 'failed_pipeline', 'success_pipeline',
];
const LEVELS = ['disabled', 'participating', 'watch', 'global', 'mention', 'custom'];
/** A custom setting never given a flag: each nil, but failed_pipeline's reader answers true. */
const unsetEvents = (extra: string[] = []) => Object.fromEntries([...EVENTS, ...extra].map((e) => [e, e === 'failed_pipeline' ? true : null]));

const rowsOf = (userId: number) =>
  api.handle.db.selectFrom('notification_settings').select(['source_type', 'source_id', 'level', 'events']).where('user_id', '=', userId).orderBy('source_id').execute();

// ───────────────────────────── Global ─────────────────────────────

describe('/notification_settings', () => {
  it('GET: participating and the primary email by default; 401 anonymous', async () => {
    const me = pool[0]!;
    const res = await api.get('/notification_settings', { token: me.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ level: 'participating', notification_email: me.user.email });
    expect(Object.keys(res.body)).toEqual(['level', 'notification_email']);
    const anonymous = await api.get('/notification_settings', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: '401 Unauthorized' });
    expect((await api.put('/notification_settings', { level: 'watch' }, { token: null })).status).toBe(401);
  });

  it.each(LEVELS)('PUT level %s: answered, stored and read back', async (level) => {
    const { token, user } = await api.createUser();
    const res = await api.put('/notification_settings', { level }, { token });
    expect(res.status).toBe(200);
    const expected = level === 'custom' ? { level, events: unsetEvents(['new_epic']), notification_email: user.email } : { level, notification_email: user.email };
    expect(res.body).toEqual(expected);
    expect((await api.get('/notification_settings', { token })).body).toEqual(expected);
    // The default level is no change: nothing to store.
    expect(await rowsOf(user.id)).toEqual(level === 'participating' ? [] : [{ source_type: null, source_id: null, level, events: {} }]);
  });

  it('PUT notification_email: the primary email is accepted; another is "is not an email you own"; nothing is stored on refusal', async () => {
    const me = pool[1]!;
    const ok = await api.put('/notification_settings', { level: 'watch', notification_email: me.user.email }, { token: me.token });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ level: 'watch', notification_email: me.user.email });

    const other = await api.put('/notification_settings', { level: 'mention', notification_email: 'invalid@example.com' }, { token: me.token });
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ message: { notification_email: ['is not an email you own'] } });
    const malformed = await api.put('/notification_settings', { notification_email: 'nope' }, { token: me.token });
    expect(malformed.body).toEqual({ message: { notification_email: ['is invalid', 'is not an email you own'] } });
    const blank = await api.put('/notification_settings', { notification_email: '' }, { token: me.token });
    expect(blank.body).toEqual({ message: { notification_email: ["can't be blank", 'is invalid', 'is not an email you own'] } });
    expect((await api.get('/notification_settings', { token: me.token })).body).toEqual({ level: 'watch', notification_email: me.user.email });
  });

  it("PUT a bad level: 400 with Rails' enum message; a blank one is the model's \"can't be blank\"", async () => {
    const me = pool[2]!;
    const bad = await api.put('/notification_settings', { level: 'loud' }, { token: me.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: "'loud' is not a valid level" });
    const blank = await api.put('/notification_settings', { level: '' }, { token: me.token });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ message: { level: ["can't be blank"] } });
    const flag = await api.put('/notification_settings', { new_note: 'maybe' }, { token: me.token });
    expect(flag.status).toBe(400);
    expect(flag.body).toEqual({ error: 'new_note is invalid' });
    expect(await rowsOf(me.user.id)).toEqual([]);
  });

  it('PUT flags: every flag persisted, shown only while the level is custom, one event per change', async () => {
    const { token, user } = await api.createUser();
    const all = Object.fromEntries([...EVENTS, 'new_epic'].map((e, i) => [e, i % 2 === 0]));
    const res = await api.put('/notification_settings', { level: 'custom', ...all }, { token });
    expect(res.body).toEqual({ level: 'custom', events: all, notification_email: user.email });
    expect(Object.keys(res.body.events)).toEqual([...EVENTS, 'new_epic']);
    const watch = await api.put('/notification_settings', { level: 'watch', new_note: false }, { token });
    expect(watch.body).toEqual({ level: 'watch', notification_email: user.email });
    const back = await api.put('/notification_settings', { level: 'custom' }, { token });
    expect(back.body.events).toEqual({ ...all, new_note: false });
    // An unchanged PUT appends nothing.
    await api.put('/notification_settings', { level: 'custom', new_note: false }, { token });
    const events = await api.events(`notification-settings-${user.id}`);
    expect(events.map((e) => [e.type, e.data.level])).toEqual([
      ['NotificationSettingChanged', 'custom'],
      ['NotificationSettingChanged', 'watch'],
      ['NotificationSettingChanged', 'custom'],
    ]);
    expect(events[0]!.metadata).toMatchObject({ actor_id: user.id });
  });
});

// ───────────────────────────── Groups and projects ─────────────────────────────

describe.each([
  ['groups', 'Namespace'],
  ['projects', 'Project'],
] as const)('/%s/:id/notification_settings', (kind, sourceType) => {
  /** A fresh private group (owned by `owner`), or a private project in one. */
  async function fresh(visibility: 'private' | 'public' = 'private') {
    const group = await createGroup(api, { token: owner.token, visibility });
    if (kind === 'groups') return { id: group.id, path: group.full_path };
    const project = await createProject(api, { token: owner.token, group, visibility });
    return { id: project.id, path: project.path_with_namespace };
  }
  const epic = kind === 'groups' ? ['new_epic'] : [];

  it('GET: level global by default, by id or full path', async () => {
    const source = await fresh();
    const res = await api.get(`/${kind}/${encodeURIComponent(source.path)}/notification_settings`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ level: 'global' });
  });

  it.each(LEVELS)('PUT level %s: answered, read back; events only when custom', async (level) => {
    const source = await fresh();
    const res = await api.put(`/${kind}/${source.id}/notification_settings`, { level }, { token: owner.token });
    expect(res.status).toBe(200);
    const expected = level === 'custom' ? { level, events: unsetEvents(epic) } : { level };
    expect(res.body).toEqual(expected);
    expect((await api.get(`/${kind}/${source.id}/notification_settings`, { token: owner.token })).body).toEqual(expected);
  });

  it("PUT flags: persisted per source, apart from the user's other settings", async () => {
    const [one, two] = [await fresh(), await fresh()];
    const { token, user } = await api.createUser();
    for (const s of [one, two]) await api.post(`/${kind}/${s.id}/members`, { user_id: user.id, access_level: 10 });
    const res = await api.put(`/${kind}/${one.id}/notification_settings`, { level: 'custom', new_note: true, new_issue: 'false', success_pipeline: '1' }, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ level: 'custom', events: { ...unsetEvents(epic), new_note: true, new_issue: false, success_pipeline: true } });
    expect((await api.get(`/${kind}/${two.id}/notification_settings`, { token })).body).toEqual({ level: 'global' });
    expect((await api.get('/notification_settings', { token })).body.level).toBe('participating');
    expect(await rowsOf(user.id)).toEqual([
      { source_type: sourceType, source_id: one.id, level: 'custom', events: { new_note: true, new_issue: false, success_pipeline: true } },
    ]);
    // Another level keeps the flags; custom again shows them.
    expect((await api.put(`/${kind}/${one.id}/notification_settings`, { level: 'mention' }, { token })).body).toEqual({ level: 'mention' });
    expect((await api.put(`/${kind}/${one.id}/notification_settings`, { level: 'custom' }, { token })).body.events.new_note).toBe(true);
  });

  it('PUT a bad level: 400, nothing stored', async () => {
    const source = await fresh();
    const res = await api.put(`/${kind}/${source.id}/notification_settings`, { level: 'invalid' }, { token: owner.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: "'invalid' is not a valid level" });
    expect((await api.get(`/${kind}/${source.id}/notification_settings`, { token: owner.token })).body).toEqual({ level: 'global' });
  });

  it(`${kind === 'groups' ? 'drops the settings of a deleted group' : 'drops the settings of a deleted project'}`, async () => {
    const source = await fresh();
    await api.put(`/${kind}/${source.id}/notification_settings`, { level: 'watch' }, { token: owner.token });
    const count = () => api.handle.db.selectFrom('notification_settings').select('user_id').where('source_type', '=', sourceType).where('source_id', '=', source.id).execute();
    expect(await count()).toHaveLength(1);
    expect((await api.del(`/${kind}/${source.id}`, { token: owner.token })).status).toBe(202);
    for (let i = 0; i < 100 && (await count()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await count()).toEqual([]);
  });
});

// ───────────────────────────── Lifecycle and tiers ─────────────────────────────

describe('notification settings', () => {
  it('go with a deleted user', async () => {
    const { token, user } = await api.createUser();
    const group = await createGroup(api, { token: owner.token, visibility: 'public' });
    await api.put('/notification_settings', { level: 'watch' }, { token });
    await api.put(`/groups/${group.id}/notification_settings`, { level: 'disabled' }, { token });
    expect(await rowsOf(user.id)).toHaveLength(2);
    expect((await api.del(`/users/${user.id}`)).status).toBe(204);
    expect(await rowsOf(user.id)).toEqual([]);
  });

  it('below ultimate, new_epic (the epics feature) is neither shown nor read', async () => {
    const { token, user } = await api.createUser();
    const group = await createGroup(api, { token: owner.token, visibility: 'public' });
    await onPlan(api, 'premium', async () => {
      const global = await api.put('/notification_settings', { level: 'custom', new_epic: true }, { token });
      expect(global.body).toEqual({ level: 'custom', events: unsetEvents(), notification_email: user.email });
      const inGroup = await api.put(`/groups/${group.id}/notification_settings`, { level: 'custom', new_epic: true }, { token });
      expect(inGroup.body).toEqual({ level: 'custom', events: unsetEvents() });
    });
    expect((await api.get('/notification_settings', { token })).body.events.new_epic).toBeNull();
    expect((await api.get(`/groups/${group.id}/notification_settings`, { token })).body.events.new_epic).toBeNull();
  });

  it('rebuilds the same rows from the log (replay equivalence)', async () => {
    await expectReplayEquivalence(api.handle, [notificationSettingsProjector]);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';
const ALL_READERS = { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 } as const;
const PUBLIC = { anonymous: 401, nonMember: 200 } as const;
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /groups/:id/notification_settings':   { private: ALL_READERS, public: PUBLIC },
  'PUT /groups/:id/notification_settings':   { private: ALL_READERS, public: PUBLIC },
  'GET /projects/:id/notification_settings': { private: ALL_READERS, public: PUBLIC },
  'PUT /projects/:id/notification_settings': { private: ALL_READERS, public: PUBLIC },
};

describe('permissions', () => {
  let callers: Callers;
  const sources = new Map<string, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const kind of ['groups', 'projects'] as const) {
      for (const visibility of ['private', 'public'] as const) sources.set(`${kind}:${visibility}`, await sourceWithRoles(api, callers, kind, visibility));
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const kind = path.split('/')[1]!;
    const url = path.replace(':id', String(sources.get(`${kind}:${visibility}`)));
    const res = await api.request(method, url, { token: callers[caller].token, ...(method === 'PUT' ? { body: { level: 'watch' } } : {}) });
    if (res.status === 404) expect(res.body).toEqual({ message: kind === 'groups' ? '404 Group Not Found' : '404 Project Not Found' });
    if (res.status === 200) expect(res.body.level).toEqual(method === 'PUT' ? 'watch' : expect.any(String));
    return res.status;
  });
});
