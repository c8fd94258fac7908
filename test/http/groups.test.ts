import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupsProjector } from '../../src/projections/groups/projector.js';
import { itOnPostgres } from '../support/database.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let owner: { user: any; token: string };
let other: { user: any; token: string };

beforeAll(async () => {
  api = await startTestServer();
  owner = await api.createUser({ username: 'gowner' });
  other = await api.createUser({ username: 'gother' });
});
afterAll(() => api.close());

/** A membership, added by root through the members API. */
async function member(groupId: number, userId: number, level: number) {
  const res = await api.post(`/groups/${groupId}/members`, { user_id: userId, access_level: level });
  if (res.status !== 201) throw new Error(`POST /groups/${groupId}/members ${res.status} ${res.text}`);
}

async function createGroup(body: Record<string, unknown>, token: string | null = api.rootToken) {
  const res = await api.post('/groups', body, { token });
  if (res.status !== 201) throw new Error(`POST /groups ${res.status} ${res.text}`);
  return res.body;
}

const lastPosition = async () => Number((await sql<{ p: string | null }>`select max(global_position) as p from events`.execute(api.handle.db)).rows[0]!.p ?? 0);

/** The events appended after a position, and the positions skipped among them (by a rolled-back append). */
async function positionsSince(position: number) {
  const { rows } = await sql<{ n: string; last: string | null }>`select count(*) as n, max(global_position) as last from events where global_position > ${position}`.execute(api.handle.db);
  const count = Number(rows[0]!.n);
  return { count, holes: Number(rows[0]!.last ?? position) - position - count };
}

const PATH_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";

describe('POST /groups', () => {
  it('creates a top-level group with GitLab 12 defaults, owned by its creator, atomically', async () => {
    const res = await api.post('/groups', { name: 'Acme Corp', path: 'acme-corp', description: 'Tools' }, { token: owner.token });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toEqual({
      id: expect.any(Number),
      web_url: `${api.url}/groups/acme-corp`,
      name: 'Acme Corp',
      path: 'acme-corp',
      description: 'Tools',
      visibility: 'private',
      share_with_group_lock: false,
      require_two_factor_authentication: false,
      two_factor_grace_period: 48,
      project_creation_level: 'developer',
      auto_devops_enabled: null,
      subgroup_creation_level: 'maintainer',
      emails_disabled: null,
      lfs_enabled: true,
      avatar_url: null,
      request_access_enabled: true,
      full_name: 'Acme Corp',
      full_path: 'acme-corp',
      parent_id: null,
      ldap_cn: null,
      ldap_access: null,
      file_template_project_id: null,
      projects: [],
      shared_projects: [],
      shared_runners_minutes_limit: null,
      extra_shared_runners_minutes_limit: null,
    });
    const id = res.body.id;
    const events = await api.events(`group-${id}`);
    expect(events.map((e) => e.type)).toEqual(['GroupCreated']);
    expect(events[0]!.data).toMatchObject({ id, parent_id: null, traversal_ids: [id], full_path: 'acme-corp', full_name: 'Acme Corp', visibility: 'private' });
    expect(events[0]!.metadata).toMatchObject({ actor_id: owner.user.id });
    const members = await api.events(`members-group-${id}`);
    expect(members).toEqual([expect.objectContaining({ type: 'MemberAdded', data: expect.objectContaining({ user_id: owner.user.id, access_level: 50 }) })]);
    // The namespace ids share one sequence with personal namespaces.
    const personal = await api.handle.db.selectFrom('namespaces').select('id').where('owner_id', '=', owner.user.id).executeTakeFirstOrThrow();
    expect(id).toBeGreaterThan(personal.id);
  });

  it('answers Grape parameter errors', async () => {
    expect((await api.post('/groups', {})).body).toEqual({ error: 'name is missing, path is missing' });
    const missingPath = await api.post('/groups', { name: 'x' });
    expect(missingPath.status).toBe(400);
    expect(missingPath.body).toEqual({ error: 'path is missing' });
    expect((await api.post('/groups', { name: 'x', path: 'x', visibility: 'secret' })).body).toEqual({ error: 'visibility does not have a valid value' });
    expect((await api.post('/groups', { name: 'x', path: 'x', two_factor_grace_period: 'soon' })).body).toEqual({ error: 'two_factor_grace_period is invalid' });
    expect((await api.post('/groups', { name: 'x', path: 'x', project_creation_level: 'everyone' })).body).toEqual({ error: 'project_creation_level does not have a valid value' });
  });

  it('refuses a taken path, case-insensitively, including a username, as GitLab 12 words it', async () => {
    await createGroup({ name: 'Taken', path: 'taken' });
    for (const path of ['taken', 'TAKEN', 'gowner']) {
      const res = await api.post('/groups', { name: 'Again', path });
      expect(res.status, path).toBe(400);
      expect(res.body).toEqual({ message: 'Failed to save group {:path=>["has already been taken"]}' });
    }
  });

  it('validates name and path like GitLab', async () => {
    const bad = await api.post('/groups', { name: '', path: '-bad' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: `Failed to save group {:name=>["can't be blank"], :path=>["${PATH_MESSAGE}"]}` });
    expect((await api.post('/groups', { name: 'Admin', path: 'admin' })).body).toEqual({ message: 'Failed to save group {:path=>["admin is a reserved name"]}' });
    expect((await api.post('/groups', { name: 'x', path: 'x', description: 'd'.repeat(256) })).body).toEqual({
      message: 'Failed to save group {:description=>["is too long (maximum is 255 characters)"]}',
    });
  });

  it('accepts form-encoded bodies (curl)', async () => {
    const res = await api.post('/groups', undefined, { form: { name: 'Formed', path: 'formed', visibility: 'internal', lfs_enabled: 'false' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ path: 'formed', visibility: 'internal', lfs_enabled: false });
  });

  it('is 401 anonymously and 403 for users who may not create groups', async () => {
    expect((await api.post('/groups', { name: 'x', path: 'anon' }, { token: null })).status).toBe(401);
    const restricted = await api.createUser({ can_create_group: false });
    const res = await api.post('/groups', { name: 'x', path: 'restricted' }, { token: restricted.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: '403 Forbidden' });
  });

  it('creates subgroups where the caller may: owners always, maintainers per subgroup_creation_level', async () => {
    const parent = await createGroup({ name: 'Parent', path: 'parent', visibility: 'internal' }, owner.token);
    const child = await api.post('/groups', { name: 'Child', path: 'child', parent_id: parent.id }, { token: owner.token });
    expect(child.status).toBe(201);
    expect(child.body).toMatchObject({ parent_id: parent.id, full_path: 'parent/child', full_name: 'Parent / Child', web_url: `${api.url}/groups/parent/child` });
    expect((await api.events(`group-${child.body.id}`))[0]!.data).toMatchObject({ traversal_ids: [parent.id, child.body.id] });

    const maintainer = await api.createUser();
    const developer = await api.createUser();
    await member(parent.id, maintainer.user.id, 40);
    await member(parent.id, developer.user.id, 30);
    expect((await api.post('/groups', { name: 'M', path: 'm', parent_id: parent.id }, { token: maintainer.token })).status).toBe(201);
    const denied = await api.post('/groups', { name: 'D', path: 'd', parent_id: parent.id }, { token: developer.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: '403 Forbidden' });
    // subgroup_creation_level owner: maintainers no longer may.
    await api.put(`/groups/${parent.id}`, { subgroup_creation_level: 'owner' }, { token: owner.token });
    expect((await api.post('/groups', { name: 'M2', path: 'm2', parent_id: parent.id }, { token: maintainer.token })).status).toBe(403);
    // A parent the caller cannot see is 404.
    const hidden = await createGroup({ name: 'Hidden', path: 'hidden' });
    const notFound = await api.post('/groups', { name: 'H', path: 'h', parent_id: hidden.id }, { token: other.token });
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({ message: '404 Group Not Found' });
    expect((await api.post('/groups', { name: 'H', path: 'h', parent_id: 999999 })).status).toBe(404);
  });

  it('refuses a subgroup more visible than its parent', async () => {
    const parent = await createGroup({ name: 'Quiet', path: 'quiet', visibility: 'internal' });
    const res = await api.post('/groups', { name: 'Loud', path: 'loud', parent_id: parent.id, visibility: 'public' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Failed to save group {:visibility_level=>["public is not allowed since the parent group has a internal visibility."]}' });
  });

  it('keeps subgroup paths unique among siblings only', async () => {
    const a = await createGroup({ name: 'A', path: 'sib-a' });
    const b = await createGroup({ name: 'B', path: 'sib-b' });
    await createGroup({ name: 'Docs', path: 'docs', parent_id: a.id });
    await createGroup({ name: 'Docs', path: 'docs', parent_id: b.id });
    await createGroup({ name: 'Docs', path: 'docs' });
    const dup = await api.post('/groups', { name: 'Docs', path: 'Docs', parent_id: a.id });
    expect(dup.body).toEqual({ message: 'Failed to save group {:path=>["has already been taken"]}' });
  });

  it('takes the pipeline minutes limits from administrators only', async () => {
    const res = await api.post('/groups', { name: 'x', path: 'minutes', shared_runners_minutes_limit: 10 }, { token: owner.token });
    expect(res.status).toBe(403);
    const admin = await api.post('/groups', { name: 'Minutes', path: 'minutes', shared_runners_minutes_limit: 10, extra_shared_runners_minutes_limit: 5 });
    expect(admin.body).toMatchObject({ shared_runners_minutes_limit: 10, extra_shared_runners_minutes_limit: 5 });
  });

  it('inherits the parent’s share_with_group_lock', async () => {
    const parent = await createGroup({ name: 'Locked', path: 'locked', share_with_group_lock: true });
    const child = await createGroup({ name: 'Kid', path: 'kid', parent_id: parent.id });
    expect(child.share_with_group_lock).toBe(true);
  });
});

describe('GET /groups/:id', () => {
  let group: any;
  let sub: any;
  beforeAll(async () => {
    group = await createGroup({ name: 'Detail', path: 'detail', visibility: 'public' }, owner.token);
    sub = await createGroup({ name: 'Sub Detail', path: 'sub-detail', parent_id: group.id, visibility: 'public' }, owner.token);
  });

  it('finds a group by id, by URL-encoded full path, with or without .json', async () => {
    for (const path of [`/groups/${sub.id}`, '/groups/detail%2Fsub-detail', '/groups/DETAIL%2Fsub-detail', `/groups/${sub.id}.json`]) {
      const res = await api.get(path, { token: owner.token });
      expect(res.status, path).toBe(200);
      expect(res.body.id).toBe(sub.id);
    }
  });

  it('shows runners_token only to those who administer the group', async () => {
    const ownerView = await api.get(`/groups/${group.id}`, { token: owner.token });
    expect(ownerView.body.runners_token).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect((await api.get(`/groups/${group.id}`)).body.runners_token).toBe(ownerView.body.runners_token);
    const dev = await api.createUser();
    await member(group.id, dev.user.id, 30);
    expect((await api.get(`/groups/${group.id}`, { token: dev.token })).body).not.toHaveProperty('runners_token');
    expect((await api.get(`/groups/${group.id}`, { token: null })).body).not.toHaveProperty('runners_token');
    // Runners tokens never reach the event log.
    const logged = await api.handle.db.selectFrom('events').select('data').where('stream_id', '=', `group-${group.id}`).execute();
    expect(JSON.stringify(logged)).not.toContain(ownerView.body.runners_token);
  });

  it('is the plain Group entity with with_projects=false', async () => {
    const res = await api.get(`/groups/${group.id}`, { token: owner.token, query: { with_projects: false } });
    expect(res.body).not.toHaveProperty('projects');
    expect(res.body).not.toHaveProperty('shared_projects');
    expect(res.body).not.toHaveProperty('runners_token');
    expect(res.body).not.toHaveProperty('shared_runners_minutes_limit');
    expect(res.body.full_path).toBe('detail');
  });

  it('adds statistics and custom attributes for administrators only', async () => {
    const admin = await api.get(`/groups/${group.id}`, { query: { statistics: true, with_custom_attributes: true } });
    expect(admin.body.statistics).toEqual({ storage_size: 0, repository_size: 0, wiki_size: 0, lfs_objects_size: 0, job_artifacts_size: 0, packages_size: 0 });
    expect(admin.body.custom_attributes).toEqual([]);
    const user = await api.get(`/groups/${group.id}`, { token: owner.token, query: { statistics: true, with_custom_attributes: true } });
    expect(user.body).not.toHaveProperty('statistics');
    expect(user.body).not.toHaveProperty('custom_attributes');
  });

  it('answers 404 Group Not Found for unknown or invisible groups', async () => {
    const hidden = await createGroup({ name: 'Secret', path: 'secret-detail' });
    for (const [path, token] of [
      [`/groups/${hidden.id}`, other.token],
      [`/groups/${hidden.id}`, null],
      ['/groups/secret-detail', other.token],
      ['/groups/999999', api.rootToken],
      ['/groups/99999999999', api.rootToken],
      ['/groups/no%2Fsuch', api.rootToken],
    ] as const) {
      const res = await api.get(path, { token });
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ message: '404 Group Not Found' });
    }
  });

  it('omits the paid-plan fields on the free plan', async () => {
    const free = await startTestServer({ plan: 'free' });
    try {
      const created = await free.post('/groups', { name: 'Free', path: 'free' });
      for (const field of ['ldap_cn', 'ldap_access', 'file_template_project_id', 'shared_runners_minutes_limit', 'extra_shared_runners_minutes_limit']) {
        expect(created.body).not.toHaveProperty(field);
      }
      expect(created.body.projects).toEqual([]);
    } finally {
      await free.close();
    }
  });
});

describe('PUT /groups/:id', () => {
  it('lets the owner rename; descendants’ full paths and names follow', async () => {
    const top = await createGroup({ name: 'Old Top', path: 'old-top', visibility: 'public' }, owner.token);
    const mid = await createGroup({ name: 'Mid', path: 'mid', parent_id: top.id, visibility: 'public' }, owner.token);
    const leaf = await createGroup({ name: 'Leaf', path: 'leaf', parent_id: mid.id }, owner.token);
    const res = await api.put(`/groups/${top.id}`, { name: 'New Top', path: 'new-top', description: 'renamed' }, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New Top', path: 'new-top', full_path: 'new-top', description: 'renamed', projects: [], shared_projects: [] });
    expect(res.body).not.toHaveProperty('runners_token');
    const leafNow = await api.get(`/groups/${leaf.id}`, { token: owner.token });
    expect(leafNow.body).toMatchObject({ full_path: 'new-top/mid/leaf', full_name: 'New Top / Mid / Leaf', web_url: `${api.url}/groups/new-top/mid/leaf` });
    expect((await api.get('/groups/new-top%2Fmid%2Fleaf', { token: owner.token })).body.id).toBe(leaf.id);
    expect((await api.get('/groups/old-top%2Fmid', { token: owner.token })).status).toBe(404);
    const events = await api.events(`group-${top.id}`);
    expect(events.at(-1)).toMatchObject({
      type: 'GroupUpdated',
      data: {
        id: top.id,
        changes: { name: 'New Top', path: 'new-top', description: 'renamed' },
        full_path: 'new-top',
        full_name: 'New Top',
        previous_full_path: 'old-top',
        previous_full_name: 'Old Top',
      },
    });
    // The old path is free again, the new one is taken.
    expect((await api.post('/groups', { name: 'Old', path: 'old-top' })).status).toBe(201);
    expect((await api.post('/groups', { name: 'New', path: 'new-top' })).status).toBe(400);
  });

  it('appends nothing when nothing changes', async () => {
    const g = await createGroup({ name: 'Same', path: 'same' }, owner.token);
    const res = await api.put(`/groups/${g.id}`, { name: 'Same', visibility: 'private' }, { token: owner.token });
    expect(res.status).toBe(200);
    expect((await api.events(`group-${g.id}`)).map((e) => e.type)).toEqual(['GroupCreated']);
  });

  it('is for owners and administrators: 401, 403, 404 otherwise', async () => {
    const g = await createGroup({ name: 'Guarded', path: 'guarded', visibility: 'internal' }, owner.token);
    const maintainer = await api.createUser();
    await member(g.id, maintainer.user.id, 40);
    expect((await api.put(`/groups/${g.id}`, { name: 'x' }, { token: null })).status).toBe(401);
    const forbidden = await api.put(`/groups/${g.id}`, { name: 'x' }, { token: maintainer.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: '403 Forbidden' });
    const privateGroup = await createGroup({ name: 'Private', path: 'guarded-private' }, owner.token);
    expect((await api.put(`/groups/${privateGroup.id}`, { name: 'x' }, { token: other.token })).body).toEqual({ message: '404 Group Not Found' });
    expect((await api.put(`/groups/${g.id}`, { description: 'by admin' })).body.description).toBe('by admin');
  });

  it('answers validation errors as a field hash', async () => {
    const g = await createGroup({ name: 'Valid', path: 'valid', visibility: 'public' });
    await createGroup({ name: 'Other', path: 'valid-other' });
    await createGroup({ name: 'Pub', path: 'pub', parent_id: g.id, visibility: 'public' });
    const taken = await api.put(`/groups/${g.id}`, { path: 'valid-other' });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { path: ['has already been taken'] } });
    const lowered = await api.put(`/groups/${g.id}`, { visibility: 'private' });
    expect(lowered.status).toBe(400);
    expect(lowered.body).toEqual({ message: { visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'] } });
    expect((await api.put(`/groups/${g.id}`, { path: 'bad path' })).body).toEqual({ message: { path: [PATH_MESSAGE] } });
    expect((await api.put(`/groups/${g.id}`, { visibility: 'hidden' })).body).toEqual({ error: 'visibility does not have a valid value' });
  });

  it('locks sharing for the whole subtree; only the parent’s owner may unlock below a locked parent', async () => {
    const top = await createGroup({ name: 'Share', path: 'share' }, owner.token);
    const sub = await createGroup({ name: 'Share Sub', path: 'share-sub', parent_id: top.id }, owner.token);
    const deep = await createGroup({ name: 'Share Deep', path: 'share-deep', parent_id: sub.id }, owner.token);
    await api.put(`/groups/${top.id}`, { share_with_group_lock: true }, { token: owner.token });
    expect((await api.get(`/groups/${deep.id}`, { token: owner.token })).body.share_with_group_lock).toBe(true);
    const subOwner = await api.createUser();
    await member(sub.id, subOwner.user.id, 50);
    const refused = await api.put(`/groups/${sub.id}`, { share_with_group_lock: false }, { token: subOwner.token });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: { share_with_group_lock: ['cannot be disabled when the parent group "Share with group lock" is enabled, except by the owner of the parent group'] },
    });
    expect((await api.put(`/groups/${sub.id}`, { share_with_group_lock: false }, { token: owner.token })).body.share_with_group_lock).toBe(false);
  });
});

describe('DELETE /groups/:id', () => {
  it('is for owners: 401, 403, 404', async () => {
    const g = await createGroup({ name: 'Keep', path: 'keep', visibility: 'internal' }, owner.token);
    const maintainer = await api.createUser();
    await member(g.id, maintainer.user.id, 40);
    expect((await api.del(`/groups/${g.id}`, { token: null })).status).toBe(401);
    expect((await api.del(`/groups/${g.id}`, { token: maintainer.token })).body).toEqual({ message: '403 Forbidden' });
    const privateGroup = await createGroup({ name: 'P', path: 'keep-private' }, owner.token);
    expect((await api.del(`/groups/${privateGroup.id}`, { token: other.token })).status).toBe(404);
    expect((await api.del(`/groups/${g.id}`, { token: owner.token, headers: { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })).status).toBe(412);
  });

  it('answers 202, hides the subtree at once, and removes it asynchronously', async () => {
    const top = await createGroup({ name: 'Doomed', path: 'doomed', visibility: 'public' }, owner.token);
    const sub = await createGroup({ name: 'Doomed Sub', path: 'doomed-sub', parent_id: top.id, visibility: 'public' }, owner.token);
    const deep = await createGroup({ name: 'Doomed Deep', path: 'doomed-deep', parent_id: sub.id }, owner.token);
    const res = await api.del(`/groups/${top.id}`, { token: owner.token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: '202 Accepted' });
    for (const id of [top.id, sub.id, deep.id]) expect((await api.get(`/groups/${id}`)).status).toBe(404);
    const listed = (await api.get('/groups', { query: { per_page: 100 } })).body.map((g: any) => g.id);
    expect(listed).not.toContain(sub.id);
    expect((await api.del(`/groups/${top.id}`, { token: owner.token })).status).toBe(404);

    await api.runtime.worker!.waitUntilCaughtUp();
    const ordered = await api.handle.db
      .selectFrom('events')
      .select(['stream_id', 'event_type', 'metadata'])
      .where('event_type', '=', 'GroupDeleted')
      .where('stream_id', 'in', [`group-${top.id}`, `group-${sub.id}`, `group-${deep.id}`])
      .orderBy('global_position')
      .execute();
    expect(ordered.map((e) => e.stream_id)).toEqual([`group-${deep.id}`, `group-${sub.id}`, `group-${top.id}`]);
    expect(ordered[0]!.metadata).toMatchObject({ actor_id: owner.user.id, causation_id: expect.any(String) });
    const rows = await api.handle.db.selectFrom('namespaces').select('id').where('id', 'in', [top.id, sub.id, deep.id]).execute();
    expect(rows).toEqual([]);
    const members = await api.handle.db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace').where('source_id', '=', top.id).execute();
    expect(members).toEqual([]);
    // The path is free again.
    expect((await api.post('/groups', { name: 'Doomed', path: 'doomed' }, { token: owner.token })).status).toBe(201);
  });
});

describe('GET /groups', () => {
  let ids: Record<string, number>;
  let lister: { user: any; token: string };
  beforeAll(async () => {
    lister = await api.createUser({ username: 'lister' });
    ids = {};
    for (const [name, path, visibility] of [
      ['Zeta', 'l-zeta', 'public'],
      ['Alpha', 'l-beta', 'internal'],
      ['Beta', 'l-alpha', 'private'],
      ['Gamma', 'l-gamma', 'private'],
    ] as const) {
      ids[path] = (await createGroup({ name, path, visibility }, lister.token)).id;
    }
    ids['l-sub'] = (await createGroup({ name: 'Delta Sub', path: 'l-sub', parent_id: ids['l-alpha'] })).id;
    await member(ids['l-gamma']!, other.user.id, 30);
  });

  const list = async (query: Record<string, any>, token: string | null = lister.token) => {
    const res = await api.get('/groups', { token, query: { per_page: 100, ...query } });
    expect(res.status).toBe(200);
    return res.body as any[];
  };
  const paths = (groups: any[]) => groups.map((g) => g.path);

  it('lists the caller’s groups with their descendants, ordered by name then id', async () => {
    expect(paths(await list({}))).toEqual(['l-beta', 'l-alpha', 'l-sub', 'l-gamma', 'l-zeta']);
    expect(paths(await list({ order_by: 'path' }))).toEqual(['l-alpha', 'l-beta', 'l-gamma', 'l-sub', 'l-zeta']);
    expect(paths(await list({ order_by: 'id', sort: 'desc' }))).toEqual(['l-sub', 'l-gamma', 'l-alpha', 'l-beta', 'l-zeta']);
  });

  it('paginates with GitLab headers', async () => {
    const res = await api.get('/groups', { token: lister.token, query: { per_page: 2, page: 2, order_by: 'path' } });
    expect(res.body.map((g: any) => g.path)).toEqual(['l-gamma', 'l-sub']);
    expect(res.headers.get('x-total')).toBe('5');
    expect(res.headers.get('x-total-pages')).toBe('3');
    expect(res.headers.get('x-per-page')).toBe('2');
    expect(res.headers.get('x-page')).toBe('2');
    expect(res.headers.get('x-next-page')).toBe('3');
    expect(res.headers.get('x-prev-page')).toBe('1');
    const links = Object.fromEntries(res.headers.get('link')!.split(', ').map((l) => [/rel="(\w+)"/.exec(l)![1], new URL(/<([^>]+)>/.exec(l)![1]!)]));
    expect(Object.keys(links).sort()).toEqual(['first', 'last', 'next', 'prev']);
    expect(links.next!.origin + links.next!.pathname).toBe(`${api.url}/api/v4/groups`);
    expect(Object.fromEntries(links.next!.searchParams)).toEqual({ page: '3', per_page: '2', order_by: 'path' });
    expect(links.last!.searchParams.get('page')).toBe('3');
  });

  it('filters: search, skip_groups, owned, min_access_level', async () => {
    expect(paths(await list({ search: 'gam' }))).toEqual(['l-gamma']);
    expect(paths(await list({ search: 'DELTA' }))).toEqual(['l-sub']);
    // GitLab: a query shorter than 3 characters matches a whole name or path only.
    expect(paths(await list({ search: 'l-' }))).toEqual([]);
    expect(paths(await list({ search: 'beta', order_by: 'path' }))).toEqual(['l-alpha', 'l-beta']);
    expect(paths(await list({ skip_groups: [ids['l-zeta']!, ids['l-sub']!], order_by: 'path' }))).toEqual(['l-alpha', 'l-beta', 'l-gamma']);
    // owned: direct ownership only (the subgroup was created by root, who owns it).
    expect(paths(await list({ owned: true, order_by: 'path' }))).toEqual(['l-alpha', 'l-beta', 'l-gamma', 'l-zeta']);
    expect(paths(await list({ min_access_level: 30 }, other.token))).toEqual(['l-gamma']);
    expect(paths(await list({ min_access_level: 40 }, other.token))).toEqual([]);
    expect((await api.get('/groups', { query: { min_access_level: 35 } })).body).toEqual({ error: 'min_access_level does not have a valid value' });
    expect((await api.get('/groups', { query: { order_by: 'size' } })).body).toEqual({ error: 'order_by does not have a valid value' });
  });

  it('shows non-members only their hierarchy unless all_available; anonymous callers public groups', async () => {
    const outsider = await api.createUser();
    expect(await list({}, outsider.token)).toEqual([]);
    const available = paths(await list({ all_available: true }, outsider.token));
    expect(available).toEqual(expect.arrayContaining(['l-zeta', 'l-beta']));
    expect(available).not.toContain('l-gamma');
    const anonymous = paths(await list({}, null));
    expect(anonymous).toContain('l-zeta');
    expect(anonymous).not.toContain('l-beta');
    expect(paths(await list({ owned: true }, null))).toEqual([]);
  });

  it('shows administrators every group, with statistics and custom attributes on request', async () => {
    const all = await list({ search: 'l-', order_by: 'path' }, api.rootToken);
    expect(all).toEqual([]);
    const admin = await list({ statistics: true, with_custom_attributes: true }, api.rootToken);
    expect(paths(admin)).toEqual(expect.arrayContaining(['l-alpha', 'l-beta', 'l-gamma', 'l-sub', 'l-zeta']));
    expect(admin[0].statistics).toEqual(expect.objectContaining({ storage_size: 0 }));
    expect(admin[0].custom_attributes).toEqual([]);
    const plain = await list({ statistics: true, with_custom_attributes: true });
    expect(plain[0]).not.toHaveProperty('statistics');
    expect(plain[0]).not.toHaveProperty('custom_attributes');
    // GitLab: all_available=false makes an administrator's list their own hierarchy.
    expect(paths(await list({ all_available: false, search: 'l-gamma' }, api.rootToken))).toEqual([]);
  });

});

describe('GET /groups/:id/subgroups', () => {
  it('lists direct subgroups the caller may list, with the same parameters', async () => {
    const top = await createGroup({ name: 'Tree', path: 'tree-top', visibility: 'public' }, owner.token);
    const a = await createGroup({ name: 'B Branch', path: 'branch-a', parent_id: top.id, visibility: 'public' }, owner.token);
    await createGroup({ name: 'A Branch', path: 'branch-b', parent_id: top.id, visibility: 'internal' }, owner.token);
    await createGroup({ name: 'Twig', path: 'twig', parent_id: a.id, visibility: 'public' }, owner.token);
    const res = await api.get(`/groups/${top.id}/subgroups`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.map((g: any) => g.path)).toEqual(['branch-b', 'branch-a']);
    expect(res.headers.get('x-total')).toBe('2');
    expect((await api.get('/groups/tree-top%2Fbranch-a/subgroups', { token: owner.token })).body.map((g: any) => g.path)).toEqual(['twig']);
    // GitLab 12: a signed-in non-member lists only their own hierarchy unless all_available.
    expect((await api.get(`/groups/${top.id}/subgroups`, { token: other.token })).body).toEqual([]);
    expect((await api.get(`/groups/${top.id}/subgroups`, { token: other.token, query: { all_available: true } })).body.map((g: any) => g.path)).toEqual([
      'branch-b',
      'branch-a',
    ]);
    expect((await api.get(`/groups/${top.id}/subgroups`, { token: null })).body.map((g: any) => g.path)).toEqual(['branch-a']);
    const hidden = await createGroup({ name: 'Closed', path: 'closed-tree' });
    expect((await api.get(`/groups/${hidden.id}/subgroups`, { token: other.token })).body).toEqual({ message: '404 Group Not Found' });
  });
});

describe('custom attributes', () => {
  it('are set, read, filtered on and deleted by administrators only', async () => {
    const g = await createGroup({ name: 'Tagged', path: 'tagged', visibility: 'public' }, owner.token);
    expect((await api.put(`/groups/${g.id}/custom_attributes/team`, { value: 'x' }, { token: owner.token })).status).toBe(403);
    expect((await api.get(`/groups/${g.id}/custom_attributes`, { token: null })).status).toBe(401);
    const set = await api.put(`/groups/${g.id}/custom_attributes/team`, { value: 'infra' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ key: 'team', value: 'infra' });
    expect((await api.get(`/groups/${g.id}/custom_attributes`)).body).toEqual([{ key: 'team', value: 'infra' }]);
    expect((await api.get(`/groups/${g.id}/custom_attributes/team`)).body).toEqual({ key: 'team', value: 'infra' });
    expect((await api.get(`/groups/${g.id}/custom_attributes/none`)).body).toEqual({ message: '404 Not found' });
    const filtered = await api.get('/groups', { query: { 'custom_attributes[team]': 'infra', with_custom_attributes: true } });
    expect(filtered.body.map((x: any) => x.id)).toEqual([g.id]);
    expect(filtered.body[0].custom_attributes).toEqual([{ key: 'team', value: 'infra' }]);
    expect((await api.del(`/groups/${g.id}/custom_attributes/team`)).status).toBe(204);
    expect((await api.del(`/groups/${g.id}/custom_attributes/team`)).status).toBe(404);
    expect((await api.events(`group-${g.id}`)).map((e) => e.type)).toEqual(['GroupCreated', 'GroupCustomAttributeSet', 'GroupCustomAttributeDeleted']);
  });
});

describe('groups and their projects', () => {
  async function createProject(body: Record<string, unknown>, token: string | null = api.rootToken) {
    const res = await api.post('/projects', body, { token });
    if (res.status !== 201) throw new Error(`POST /projects ${res.status} ${res.text}`);
    return res.body;
  }

  it('details carry the readable projects of the group itself, newest first, and the projects shared with it', async () => {
    const g = await createGroup({ name: 'Proj', path: 'proj', visibility: 'internal' }, owner.token);
    const sub = await createGroup({ name: 'Proj Sub', path: 'proj-sub', parent_id: g.id, visibility: 'internal' }, owner.token);
    const open = await createProject({ name: 'Open', namespace_id: g.id, visibility: 'internal' }, owner.token);
    const closed = await createProject({ name: 'Closed', namespace_id: g.id, visibility: 'private' }, owner.token);
    await createProject({ name: 'Below', namespace_id: sub.id, visibility: 'internal' }, owner.token);
    const elsewhere = await createProject({ name: 'Elsewhere', visibility: 'internal' }, other.token);
    expect((await api.post(`/projects/${elsewhere.id}/share`, { group_id: g.id, group_access: 30 }, { token: other.token })).status).toBe(201);

    const asOwner = (await api.get(`/groups/${g.id}`, { token: owner.token })).body;
    expect(asOwner.projects.map((p: any) => p.id)).toEqual([closed.id, open.id]);
    expect(asOwner.projects[0]).toMatchObject({ path_with_namespace: 'proj/closed', namespace: { id: g.id, kind: 'group', full_path: 'proj' } });
    expect(asOwner.shared_projects.map((p: any) => p.id)).toEqual([elsewhere.id]);
    const outsider = await api.createUser();
    expect((await api.get(`/groups/${g.id}`, { token: outsider.token })).body.projects.map((p: any) => p.id)).toEqual([open.id]);
  });

  it('caps each list at 100 projects', async () => {
    const g = await createGroup({ name: 'Many', path: 'many', visibility: 'public' });
    for (let i = 0; i < 101; i++) await createProject({ name: `p${i}`, namespace_id: g.id, visibility: 'public' });
    const detail = (await api.get(`/groups/${g.id}`)).body;
    expect(detail.projects).toHaveLength(100);
    expect(detail.projects[0].path).toBe('p100');
  });

  it('makes a private group readable to members of a project inside it (GitLab’s has_projects)', async () => {
    const g = await createGroup({ name: 'Host', path: 'host' }, owner.token);
    const sub = await createGroup({ name: 'Host Sub', path: 'host-sub', parent_id: g.id }, owner.token);
    const project = await createProject({ name: 'Inside', namespace_id: sub.id }, owner.token);
    const guest = await api.createUser();
    expect((await api.get(`/groups/${g.id}`, { token: guest.token })).status).toBe(404);
    expect((await api.post(`/projects/${project.id}/members`, { user_id: guest.user.id, access_level: 10 })).status).toBe(201);
    for (const id of [g.id, sub.id]) expect((await api.get(`/groups/${id}`, { token: guest.token })).status).toBe(200);
    const listed = (await api.get('/groups', { token: guest.token })).body.map((x: any) => x.id);
    expect(listed).toEqual([g.id, sub.id]);
    // Reading is all it gives.
    expect((await api.put(`/groups/${g.id}`, { description: 'x' }, { token: guest.token })).status).toBe(403);
  });

  it('refuses lowering a group below one of its projects', async () => {
    const g = await createGroup({ name: 'Loud Group', path: 'loud-group', visibility: 'public' });
    await createProject({ name: 'Loud', namespace_id: g.id, visibility: 'internal' });
    const res = await api.put(`/groups/${g.id}`, { visibility: 'private' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { visibility_level: ['private is not allowed since this group contains projects with higher visibility.'] } });
  });

  it('removes the projects of a deleted group’s subtree', async () => {
    const g = await createGroup({ name: 'Gone', path: 'gone', visibility: 'public' }, owner.token);
    const sub = await createGroup({ name: 'Gone Sub', path: 'gone-sub', parent_id: g.id, visibility: 'public' }, owner.token);
    const top = await createProject({ name: 'Top', namespace_id: g.id, visibility: 'public' }, owner.token);
    const below = await createProject({ name: 'Below', namespace_id: sub.id, visibility: 'public' }, owner.token);
    expect((await api.del(`/groups/${g.id}`, { token: owner.token })).status).toBe(202);
    for (const id of [top.id, below.id]) expect((await api.get(`/projects/${id}`)).status).toBe(404);
    await api.runtime.worker!.waitUntilCaughtUp();
    for (const id of [top.id, below.id]) expect((await api.events(`project-${id}`)).at(-1)!.type).toBe('ProjectDeleted');
    expect(await api.handle.db.selectFrom('projects').select('id').where('id', 'in', [top.id, below.id]).execute()).toEqual([]);
  });
});

describe('concurrent writers', () => {
  it('let one of two creations of the same path win', async () => {
    const results = await Promise.all([api.post('/groups', { name: 'Race', path: 'race' }), api.post('/groups', { name: 'Race', path: 'RACE' })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(results.find((r) => r.status === 400)!.body).toEqual({ message: 'Failed to save group {:path=>["has already been taken"]}' });
  });

  // Every creation under one parent takes the parent's row the same way (`for share`, from the
  // command to the projector), so none waits for another's: before, each upgraded its share
  // lock to `for update` in the projector and they deadlocked. A transaction rolled back and
  // retried leaves a hole in the log's positions (an identity is never given back).
  itOnPostgres('create eight subgroups of one parent at once: all 201, no transaction retried', async () => {
    const parent = await createGroup({ name: 'Crowd', path: 'crowd' });
    const before = await lastPosition();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => api.post('/groups', { name: `Kid ${i}`, path: `kid-${i}`, parent_id: parent.id })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await positionsSince(before)).toEqual({ count: 16, holes: 0 }); // GroupCreated and the owner's MemberAdded each
    const subgroups = await api.get(`/groups/${parent.id}/subgroups`, { query: { per_page: 20 } });
    expect((subgroups.body as { full_path: string }[]).map((g) => g.full_path).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `crowd/kid-${i}`));
  });

  it('keep a subgroup created during its parent’s rename under the new path', async () => {
    for (let round = 0; round < 5; round++) {
      const parent = await createGroup({ name: `Mover ${round}`, path: `mover-${round}` });
      const [renamed, child] = await Promise.all([
        api.put(`/groups/${parent.id}`, { path: `moved-${round}` }),
        api.post('/groups', { name: 'Kid', path: 'kid', parent_id: parent.id }),
      ]);
      expect(renamed.status).toBe(200);
      expect(child.status).toBe(201);
      expect((await api.get(`/groups/${child.body.id}`)).body.full_path).toBe(`moved-${round}/kid`);
    }
  });
});

describe('personal namespaces', () => {
  it('follow the user: created with it, renamed with it, removed with it', async () => {
    const { user } = await api.createUser({ username: 'nsuser', name: 'Ns User' });
    const row = () => api.handle.db.selectFrom('namespaces').selectAll().where('owner_id', '=', user.id).executeTakeFirst();
    expect(await row()).toMatchObject({ kind: 'user', path: 'nsuser', full_path: 'nsuser', name: 'Ns User', full_name: 'Ns User', parent_id: null });
    const created = await api.events(`user-${user.id}`);
    expect((await row())!.id).toBe(created[0]!.data.namespace_id);
    expect((await row())!.traversal_ids).toEqual([created[0]!.data.namespace_id]);
    await api.put(`/users/${user.id}`, { username: 'nsuser2', name: 'Renamed' });
    expect(await row()).toMatchObject({ path: 'nsuser2', full_path: 'nsuser2', name: 'Renamed', full_name: 'Renamed' });
    // A username is a top-level namespace path: a group cannot take it.
    expect((await api.post('/groups', { name: 'x', path: 'NSUSER2' })).status).toBe(400);
    await api.del(`/users/${user.id}`, { query: { hard_delete: true } });
    expect(await row()).toBeUndefined();
  });
});

describe('replay', () => {
  it('rebuilding the namespaces projection from the log yields the same rows', async () => {
    await api.runtime.worker!.waitUntilCaughtUp();
    await expectReplayEquivalence(api.handle, [groupsProjector]);
  });
});
