import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toStoredEvent } from '../../src/eventstore/store.js';
import { LOG_START, checkpointOf, type StoredEvent } from '../../src/eventstore/types.js';
import { defineProjector } from '../../src/projections/projector.js';
import { keepCompacted, keptEventsTable, readEvents } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { usersProjector } from '../../src/projections/users.js';
import { settled } from '../support/fixtures.js';
import { rowsLeftBy } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A projector's `applyBatch` (the async worker's and rebuild's fast path) must leave the rows
 * `apply` leaves event by event (src/projections/projector.ts). Random command sequences go
 * through the API; each batching projector then applies the events they appended, in log
 * order, into empty copies of its tables: once with `apply` one by one, once with
 * `applyBatch` on pages cut at random. Every table must hold the same rows.
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const BATCHING = PROJECTORS.filter((p) => p.applyBatch);

// ───────────────────────────── Commands ─────────────────────────────

const who = fc.nat(5);
const which = fc.nat(5);
const key = fc.constantFrom('k1', 'k2');
const value = fc.constantFrom('a', 'b', null);

const command = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('createUser' as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('updateUser' as const),
      who,
      field: fc.constantFrom('name', 'username', 'bio', 'location', 'admin', 'identity', 'email', 'password', 'nameAndBio'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('block' as const, 'unblock' as const), who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('status' as const), who, clear: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('createToken' as const, 'revokeToken' as const), who }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('userAttribute' as const), who, key, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteUser' as const), who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('createGroup' as const), parent: which }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('updateGroup' as const), which, field: fc.constantFrom('rename', 'description', 'lock', 'unlock') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('groupAttribute' as const), which, key, value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteGroup' as const), which }) },
);
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

let run = 0;

/**
 * Runs the commands on users and groups of their own (two users and a group to start with);
 * failures (4xx: a blocked user's status, a deleted group's rename) are part of the game.
 */
async function perform(commands: readonly Command[]) {
  const n = ++run;
  const users = await Promise.all([0, 1].map((i) => api.createUser({ username: `ab${n}u${i}` })));
  const tokens = new Map<number, number[]>();
  const groups = [(await api.post('/groups', { name: `Batch ${n}`, path: `batch-${n}`, visibility: 'private' })).body as { id: number }];
  const pick = <T>(list: readonly T[], i: number) => list[i % list.length]!;
  for (const [step, c] of commands.entries()) {
    switch (c.op) {
      case 'createUser':
        users.push(await api.createUser({ username: `ab${n}u${users.length}` }));
        break;
      case 'updateUser': {
        const { user } = pick(users, c.who);
        const changes = {
          name: { name: `Name ${step}` },
          username: { username: `ab${n}s${step}` },
          bio: { bio: `bio ${step}` },
          location: { location: step % 2 === 0 ? 'here' : '' },
          admin: { admin: step % 2 === 0 },
          identity: { provider: 'ldap', extern_uid: `uid-${n}-${step}` },
          email: { email: `ab${n}s${step}@example.com` },
          password: { password: `a long password ${step}` },
          nameAndBio: { name: `Name ${step}`, bio: `renamed at ${step}` },
        }[c.field];
        await api.put(`/users/${user.id}`, changes);
        break;
      }
      case 'block':
      case 'unblock':
        await api.post(`/users/${pick(users, c.who).user.id}/${c.op}`);
        break;
      case 'status':
        await api.put('/user/status', c.clear ? { emoji: '', message: '' } : { emoji: 'coffee', message: `step ${step}` }, { token: pick(users, c.who).token });
        break;
      case 'createToken': {
        const { user } = pick(users, c.who);
        const created = await api.post(`/users/${user.id}/impersonation_tokens`, { name: `t${step}`, scopes: ['api'] });
        if (created.status === 201) tokens.set(user.id, [...(tokens.get(user.id) ?? []), created.body.id]);
        break;
      }
      case 'revokeToken': {
        const { user } = pick(users, c.who);
        const id = tokens.get(user.id)?.pop();
        if (id !== undefined) await api.del(`/users/${user.id}/impersonation_tokens/${id}`);
        break;
      }
      case 'userAttribute': {
        const { user } = pick(users, c.who);
        if (c.value === null) await api.del(`/users/${user.id}/custom_attributes/${c.key}`);
        else await api.put(`/users/${user.id}/custom_attributes/${c.key}`, { value: c.value });
        break;
      }
      case 'deleteUser':
        await api.del(`/users/${pick(users, c.who).user.id}`, { query: { hard_delete: true } });
        break;
      case 'createGroup': {
        const created = await api.post('/groups', { name: `Sub ${step}`, path: `batch-${n}-${step}`, parent_id: pick(groups, c.parent).id, visibility: 'private' });
        if (created.status === 201) groups.push(created.body);
        break;
      }
      case 'updateGroup': {
        const changes = {
          rename: { path: `batch-${n}-r${step}`, name: `Renamed ${step}` },
          description: { description: `step ${step}` },
          lock: { share_with_group_lock: true },
          unlock: { share_with_group_lock: false },
        }[c.field];
        await api.put(`/groups/${pick(groups, c.which).id}`, changes);
        break;
      }
      case 'groupAttribute': {
        const group = pick(groups, c.which);
        if (c.value === null) await api.del(`/groups/${group.id}/custom_attributes/${c.key}`);
        else await api.put(`/groups/${group.id}/custom_attributes/${c.key}`, { value: c.value });
        break;
      }
      case 'deleteGroup':
        await api.del(`/groups/${pick(groups, c.which).id}`);
        // The removal finishes in a reactor: let it, so that no command runs beside it.
        for (let i = 0; i < 3; i++) await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
        break;
    }
  }
}

/** The position of the log's last event: the next run's events come after it. */
async function logEnd(): Promise<string> {
  const { rows } = await sql<{ at: string }>`select coalesce(max(global_position), 0)::text as at from events`.execute(api.handle.db);
  return rows[0]!.at;
}

/** The events after `from` in the gap-free order projectors see. */
async function eventsAfter(from: string): Promise<StoredEvent[]> {
  const rows = await api.handle.db
    .selectFrom('events')
    .selectAll()
    .where('global_position', '>', from)
    .orderBy('transaction_id')
    .orderBy('global_position')
    .execute();
  return rows.map(toStoredEvent);
}

/** `events` cut into pages, the sizes taken in turn from `sizes`. */
function pages<T>(events: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, k = 0; i < events.length; k++) {
    const size = sizes[k % sizes.length]!;
    out.push(events.slice(i, i + size));
    i += size;
  }
  return out;
}

describe('applyBatch', () => {
  it('leaves the rows apply leaves event by event, however the events are cut into batches', async () => {
    expect(BATCHING.length).toBeGreaterThan(0);
    const applied = new Map(BATCHING.map((p) => [p.name, 0]));
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }), async (commands, sizes) => {
        const from = await logEnd();
        await perform(commands);
        const log = await eventsAfter(from);
        for (const projector of BATCHING) {
          const events = log.filter((e) => projector.handles.includes(e.type));
          applied.set(projector.name, applied.get(projector.name)! + events.length);
          const expected = await rowsLeftBy(api.handle.db, projector.tables, async (trx) => {
            for (const event of events) await projector.apply(event, trx);
          });
          const batched = await rowsLeftBy(api.handle.db, projector.tables, async (trx) => {
            for (const page of pages(events, sizes)) await projector.applyBatch!(page, trx);
          });
          expect(batched, `${projector.name}, pages of ${sizes.join(', ')}`).toEqual(expected);
        }
      }),
      { numRuns: 8, endOnFailure: true },
    );
    // The commands are users' and groups': the projectors with batch paths of their own had events to apply.
    for (const name of ['users', 'namespaces']) expect(applied.get(name), name).toBeGreaterThan(0);
  }, 600_000);

  it('takes a username or email given up earlier in the batch (a rename, a deletion) as the log did: after it is given up', async () => {
    const from = await logEnd();
    const [a, b, c] = await Promise.all(['freed-a', 'freed-b', 'freed-c'].map((username) => api.createUser({ username })));
    const rename = async (id: number, changes: object) => expect((await api.put(`/users/${id}`, { ...changes, skip_reconfirmation: true })).text).toMatch(/^{"id"/);
    await rename(a!.user.id, { username: 'freed-a2', email: 'freed-a2@example.com' });
    await rename(b!.user.id, { username: 'freed-a', email: 'freed-a@example.com' }); // a's, given up just before
    expect((await api.del(`/users/${c!.user.id}`, { query: { hard_delete: true } })).status).toBe(204);
    await settled(api);
    await api.createUser({ username: 'freed-c' }); // c's, since deleted
    const events = (await eventsAfter(from)).filter((e) => usersProjector.handles.includes(e.type));
    const expected = await rowsLeftBy(api.handle.db, usersProjector.tables, async (trx) => {
      for (const event of events) await usersProjector.apply(event, trx);
    });
    for (const size of [events.length, 7, 3]) {
      const batched = await rowsLeftBy(api.handle.db, usersProjector.tables, async (trx) => {
        for (const page of pages(events, [size])) await usersProjector.applyBatch(page, trx);
      });
      expect(batched, `pages of ${size}`).toEqual(expected);
    }
  });

  it("leaves the same rows when a replay compacts the log: of a lastWins group each stream's last event, of a run of merging events one", async () => {
    const compacting = PROJECTORS.filter((p) => (p.lastWins ?? []).length > 0 || (p.mergeRuns ?? []).length > 0);
    expect(compacting.map((p) => p.name)).toEqual(expect.arrayContaining(['users', 'namespaces', 'projects']));
    let dropped = 0;
    let merged = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (commands) => {
        const from = await logEnd();
        // Two statuses of one user and profile edits of another to start with, so that every run has events to leave
        // out: two edits that merge across a status, a rename (it merges with none) that sets the bio again, an edit after it.
        const start: Command[] = [
          { op: 'status', who: 0, clear: false },
          { op: 'status', who: 0, clear: true },
          { op: 'updateUser', who: 1, field: 'bio' },
          { op: 'status', who: 1, clear: false },
          { op: 'updateUser', who: 1, field: 'location' },
          { op: 'updateUser', who: 1, field: 'nameAndBio' },
          { op: 'updateUser', who: 1, field: 'email' },
        ];
        await perform([...start, ...commands]);
        const log = await eventsAfter(from);
        // What an as_of build replays (src/projections/as-of.ts), read as it reads it; this run's streams begin after `from`.
        const last = log.at(-1)!;
        const table = `public.scratch_kept_${run}`;
        await keptEventsTable(table).execute(api.handle.db);
        const compaction = await keepCompacted(api.handle.db, table, PROJECTORS, checkpointOf(last));
        const read = await readEvents(api.handle.db, LOG_START, { gapFree: false, limit: 1_000_000, through: checkpointOf(last), compaction: compaction! });
        await sql`drop table ${sql.table(table)}`.execute(api.handle.db);
        const replayed = read.filter((e) => BigInt(e.globalPosition) > BigInt(from));
        dropped += log.length - replayed.length;
        const original = new Map(log.map((e) => [e.eventId, e]));
        merged += replayed.filter((e) => JSON.stringify(e.data) !== JSON.stringify(original.get(e.eventId)!.data)).length;
        for (const projector of compacting) {
          const events = log.filter((e) => projector.handles.includes(e.type));
          const expected = await rowsLeftBy(api.handle.db, projector.tables, async (trx) => {
            for (const event of events) await projector.apply(event, trx);
          });
          const compacted = await rowsLeftBy(api.handle.db, projector.tables, async (trx) => {
            for (const event of replayed) if (projector.handles.includes(event.type)) await projector.apply(event, trx);
          });
          expect(compacted, projector.name).toEqual(expected);
        }
      }),
      { numRuns: 6, endOnFailure: true },
    );
    expect(dropped).toBeGreaterThan(0);
    expect(merged).toBeGreaterThan(0);
  }, 600_000);

  it('applies an event a batch holds twice once, also when both are the same object (a replay of a doubled log)', async () => {
    // A handler that is not idempotent by itself (MergeRequestTimeSpent adds to a total): only the guard keeps it to once.
    const applied: string[] = [];
    const counting = defineProjector({
      name: 'users', // its stream versions table, users_stream_versions, is the one rowsLeftBy copies
      tables: [],
      on: { UserCreated: async ({ eventId }) => void applied.push(eventId), UserBlocked: async ({ eventId }) => void applied.push(eventId) },
    });
    const from = await logEnd();
    const { user } = await api.createUser({ username: 'twice-in-a-batch' });
    await api.post(`/users/${user.id}/block`);
    const events = (await eventsAfter(from)).filter((e) => counting.handles.includes(e.type));
    expect(events.map((e) => e.type)).toEqual(['UserCreated', 'UserBlocked']);
    const [created, blocked] = events as [StoredEvent, StoredEvent];
    await rowsLeftBy(api.handle.db, counting.tables, async (trx) => {
      await counting.applyBatch([created, created, blocked], trx);
      await counting.applyBatch([blocked, created], trx);
    });
    expect(applied).toEqual([created.eventId, blocked.eventId]);
  });
});
