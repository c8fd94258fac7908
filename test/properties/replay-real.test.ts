import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toStoredEvent } from '../../src/eventstore/store.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { expectReplayEquivalence, rowsLeftBy } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

/** Every status of a scenario step must be a success: the log must hold what the API did. */
const ok = <R extends { status: number; text: string }>(res: R): R => {
  expect(res.status, res.text).toBeLessThan(300);
  return res;
};

describe('replay equivalence of the real projections', () => {
  it('rebuilding users, namespaces, members and projects from the log gives the rows the inline path wrote', async () => {
    const alice = await api.createUser({ username: 'alice' });
    const bob = await api.createUser({ username: 'bob' });
    ok(await api.put(`/users/${alice.user.id}`, { bio: 'hello', username: 'alice2', extern_uid: 'a-1', provider: 'ldap' }));
    ok(await api.put('/user/status', { emoji: 'coffee', message: 'busy' }, { token: bob.token }));
    ok(await api.put('/user/status', { emoji: '', message: '' }, { token: bob.token }));
    const impersonation = ok(await api.post(`/users/${bob.user.id}/impersonation_tokens`, { name: 'imp', scopes: ['api'] }));
    ok(await api.del(`/users/${bob.user.id}/impersonation_tokens/${impersonation.body.id}`));

    const parent = ok(await api.post('/groups', { name: 'Parent', path: 'parent', visibility: 'public' })).body;
    const child = ok(await api.post('/groups', { name: 'Child', path: 'child', parent_id: parent.id, visibility: 'internal' })).body;
    ok(await api.post(`/groups/${parent.id}/members`, { user_id: alice.user.id, access_level: 30 }));
    ok(await api.put(`/groups/${parent.id}/members/${alice.user.id}`, { access_level: 40 }));
    ok(await api.post(`/groups/${child.id}/access_requests`, undefined, { token: bob.token }));
    ok(await api.put(`/groups/${child.id}/access_requests/${bob.user.id}/approve`, { access_level: 20 }));

    const project = ok(await api.post('/projects', { name: 'Tool', namespace_id: child.id, visibility: 'internal' })).body;
    const personal = ok(await api.post('/projects', { name: 'Mine' }, { token: alice.token })).body;
    ok(await api.post(`/projects/${project.id}/star`, undefined, { token: alice.token }));
    ok(await api.post(`/projects/${project.id}/archive`));
    // Shares: one kept, one removed (project_group_links from the log).
    ok(await api.post(`/projects/${personal.id}/share`, { group_id: parent.id, group_access: 20, expires_at: '2999-01-01' }, { token: alice.token }));
    ok(await api.post(`/projects/${personal.id}/share`, { group_id: child.id, group_access: 30 }, { token: alice.token }));
    ok(await api.del(`/projects/${personal.id}/share/${child.id}`, { token: alice.token }));
    ok(await api.put(`/projects/${personal.id}`, { description: 'renamed below', path: 'mine2' }, { token: alice.token }));
    ok(await api.put(`/groups/${child.id}`, { path: 'kid', name: 'Kid' }));
    ok(await api.post(`/projects/${personal.id}/members`, { user_id: bob.user.id, access_level: 30 }, { token: alice.token }));
    ok(await api.del(`/projects/${personal.id}/members/${bob.user.id}`, { token: alice.token }));

    // Interleaved creations and updates of many users: the rebuild's merged batch path.
    for (let i = 0; i < 8; i++) {
      const { user, token } = await api.createUser({ username: `batch${i}` });
      ok(await api.put('/user/status', { message: `m${i}` }, { token }));
      if (i % 2 === 0) ok(await api.post(`/users/${user.id}/block`));
      if (i % 4 === 0) ok(await api.post(`/users/${user.id}/unblock`));
      ok(await api.put(`/users/${user.id}`, { name: `Batch ${i}`, location: i % 3 === 0 ? 'here' : '' }));
      if (i === 5) ok(await api.del(`/users/${user.id}`, { query: { hard_delete: true } }));
    }

    await expectReplayEquivalence(api.handle, PROJECTORS);
    // The rebuilt tables still answer the API as before.
    const fetched = ok(await api.get(`/projects/${project.id}`)).body;
    expect(fetched.path_with_namespace).toBe('parent/kid/tool');
    expect(fetched.archived).toBe(true);
    const shares = ok(await api.get(`/projects/${personal.id}`, { token: alice.token })).body.shared_with_groups;
    expect(shares.map((g: any) => [g.group_id, g.group_access_level, g.expires_at])).toEqual([[parent.id, 20, '2999-01-01']]);
  });

  it("the batch paths leave apply's rows however the log is cut into batches, also over rows already there", async () => {
    const db = api.handle.db;
    const log = (await db.selectFrom('events').selectAll().orderBy('transaction_id').orderBy('global_position').execute()).map(toStoredEvent);
    const batched = PROJECTORS.filter((p) => p.applyBatch);
    for (const projector of batched) {
      const events = log.filter((e) => projector.handles.includes(e.type));
      const expected = await rowsLeftBy(db, projector.tables, async (trx) => {
        for (const event of events) await projector.apply(event, trx);
      });
      // Batches of one page each (creations and updates of a user together: folded), or
      // cut between a user's events (updates of rows created by an earlier batch: merged).
      for (const size of [events.length, 7, 3, 1]) {
        const rows = await rowsLeftBy(db, projector.tables, async (trx) => {
          for (let i = 0; i < events.length; i += size) await projector.applyBatch!(events.slice(i, i + size), trx);
        });
        expect(rows, `${projector.name}, batches of ${size}`).toEqual(expected);
      }
      // The creations already applied (a replayed batch): the rest still lands as apply leaves it.
      const replayed = await rowsLeftBy(db, projector.tables, async (trx) => {
        for (const event of events) if (event.type === 'UserCreated') await projector.apply(event, trx);
        await projector.applyBatch!(events, trx);
      });
      expect(replayed, `${projector.name}, creations applied before`).toEqual(expected);
    }
  });
});
