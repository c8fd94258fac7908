import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAggregate } from '../../src/domain/aggregate.js';
import { createGroup, DEFAULT_GROUP_SETTINGS } from '../../src/commands/groups.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';
import { nextId } from '../../src/commands/kernel/handler.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import type { GroupCommand, GroupState } from '../../src/domain/groups/decider.js';
import type { GroupEvent } from '../../src/domain/groups/events.js';
import { readStream } from '../../src/eventstore/store.js';
import { findGroupRow } from '../../src/projections/groups/facts.js';
import { inlineProjectors } from '../../src/projections/registry.js';
import { describeOnPostgres, openTestDatabase } from '../support/database.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { commandContext } from '../projections/fixtures.js';
import { run } from '../../src/commands/kernel/run.js';
import { groups } from '../../src/domain/groups/aggregate.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

const metadata = { actor_id: 1 };
const create = (path: string) => ({ type: 'CreateGroup', settings: { ...DEFAULT_GROUP_SETTINGS, name: path, path }, parent: null }) as const;

describe('the groups aggregate', () => {
  it('refuses an event its schema refuses before anything is written: no event, no claim, no row', async () => {
    const ctx = commandContext(handle, inlineProjectors());
    // A decider with a defect: its GroupCreated carries a visibility that is none of GitLab's.
    const defective = defineAggregate({
      ...groups,
      decider: {
        ...groups.decider,
        decide: (command: GroupCommand, state: GroupState) =>
          groups.decider.decide(command, state).map((event) => ({ ...event, data: { ...event.data, visibility: 'secret' } }) as unknown as GroupEvent),
      },
    });
    const id = await nextId(handle.db, 'namespaces_id_seq');
    await expect(run({ ctx, metadata }, defective, id, create('schema-check'))).rejects.toThrow(/GroupCreated does not match its schema/);
    expect(await readStream(handle.db, groups.streamId(id))).toEqual([]);
    expect(await findGroupRow(handle.db, id)).toBeUndefined();

    // The path was not claimed: the real aggregate creates the group under it.
    await run({ ctx, metadata }, groups, id, create('schema-check'));
    expect((await readStream(handle.db, groups.streamId(id))).map((e) => e.type)).toEqual(['GroupCreated']);
    expect(await findGroupRow(handle.db, id)).toMatchObject({ path: 'schema-check', visibility: 'private' });
  });
});

describeOnPostgres('creating a group in one round trip', () => {
  let api: TestServer;
  beforeAll(async () => {
    api = await startTestServer();
  });
  afterAll(() => api.close());

  /** The command context of the server, its batches counted. */
  function counted() {
    const base = api.runtime.app.commands;
    const sent = { batches: 0 };
    const ctx: CommandContext = { ...base, oneRoundTrip: (statements) => (sent.batches++, base.oneRoundTrip!(statements)) };
    return { w: { ctx, metadata: { actor_id: 1, actor_username: 'root' } }, sent };
  }
  const root = async () => ({ id: (await api.handle.db.selectFrom('users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id, isAdmin: true });
  const namespace = (id: number) => api.handle.db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('sends a subgroup, its owner and every projection at once when the parent is as read', async () => {
    const parent = (await api.post('/groups', { name: 'Trip Parent', path: 'trip-parent', visibility: 'public' })).body;
    const { w, sent } = counted();
    const created = await createGroup(w, { settings: { name: 'Quick', path: 'quick', visibility: 'public' }, parent: await namespace(parent.id), creator: await root() });
    expect(sent.batches).toBe(1);
    expect((await api.get(`/groups/${created.state.id}`)).body).toMatchObject({ full_path: 'trip-parent/quick', parent_id: parent.id, visibility: 'public' });
    expect((await api.get(`/groups/${created.state.id}/members`)).body).toMatchObject([{ username: 'root', access_level: 50 }]);
    // Its path is claimed like any group's: the same path again is refused.
    expect((await api.post('/groups', { name: 'Quick', path: 'quick', parent_id: parent.id })).status).toBe(400);
  });

  it('decides again in a transaction when the parent changed after it was read', async () => {
    const parent = (await api.post('/groups', { name: 'Trip Changing', path: 'trip-changing', visibility: 'public' })).body;
    const read = await namespace(parent.id);
    expect((await api.put(`/groups/${parent.id}`, { visibility: 'private' })).status).toBe(200);
    const { w, sent } = counted();
    // Decided on the public parent it was read as, the subgroup would be public under a private group.
    await expect(createGroup(w, { settings: { name: 'Late', path: 'late', visibility: 'public' }, parent: read, creator: await root() })).rejects.toMatchObject({ code: 'invalid' });
    expect(sent.batches).toBe(1);
    expect((await api.get(`/groups/${parent.id}/subgroups`)).body).toEqual([]);
  });
});
