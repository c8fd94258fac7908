import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/database/database.js';
import { toStoredEvent } from '../../src/eventstore/store.js';
import type { ProjectedEvent } from '../../src/eventstore/types.js';
import { applyEvents } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { settled } from '../support/fixtures.js';
import { rowsLeftBy, snapshotTables } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Projectors are idempotent (DESIGN.md, "Read path"; issue 9 §3): random command sequences go
 * through the real command path (HTTP), then the whole log is replayed into fresh tables —
 * every event twice, an older event of a stream again after a newer one, and the batch paths
 * with every event twice — and each replay must leave exactly the rows the inline path wrote.
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const TABLES = [...new Set(PROJECTORS.flatMap((p) => p.tables))];

/** One event through every projector that handles it, in registry order (as the inline path runs them). */
async function applyAll(event: ProjectedEvent, trx: Db) {
  for (const projector of PROJECTORS) if (projector.handles.includes(event.type)) await projector.apply(event, trx);
}

// ───────────────────────────── Commands ─────────────────────────────

type Kind = 'groups' | 'projects';
const kind = fc.constantFrom<Kind>('groups', 'projects');
const who = fc.nat(2);
const level = fc.constantFrom(10, 20, 30, 40);
const key = fc.constantFrom('k1', 'k2');

const command = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('add' as const), kind, who, level }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('update' as const), kind, who, level }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('remove' as const), kind, who }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('request' as const), kind, who }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('approve' as const, 'deny' as const), kind, who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('star' as const, 'unstar' as const), who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('groupAttribute' as const, 'userAttribute' as const), who, key, value: fc.constantFrom('a', 'b', null) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('status' as const, 'archive' as const, 'unarchive' as const, 'renameGroup' as const), who }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('deleteProject' as const, 'deleteGroup' as const, 'deleteUser' as const), who }) },
);
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

let run = 0;

/** Runs the commands against a group, a project in it and three users of their own; failures (4xx) are part of the game. */
async function perform(commands: readonly Command[]) {
  const n = ++run;
  const users = await Promise.all([0, 1, 2].map((i) => api.createUser({ username: `idem${n}u${i}` })));
  const group = (await api.post('/groups', { name: `Idem ${n}`, path: `idem-${n}`, visibility: 'private' })).body;
  const project = (await api.post('/projects', { name: `Idem ${n}`, namespace_id: group.id, visibility: 'private' })).body;
  const source = (k: Kind) => (k === 'groups' ? group.id : project.id);
  for (const [step, c] of commands.entries()) {
    const user = users[c.who]!;
    switch (c.op) {
      case 'add':
        await api.post(`/${c.kind}/${source(c.kind)}/members`, { user_id: user.user.id, access_level: c.level });
        break;
      case 'update':
        await api.put(`/${c.kind}/${source(c.kind)}/members/${user.user.id}`, { access_level: c.level });
        break;
      case 'remove':
        await api.del(`/${c.kind}/${source(c.kind)}/members/${user.user.id}`);
        break;
      case 'request':
        await api.post(`/${c.kind}/${source(c.kind)}/access_requests`, undefined, { token: user.token });
        break;
      case 'approve':
        await api.put(`/${c.kind}/${source(c.kind)}/access_requests/${user.user.id}/approve`, { access_level: 20 });
        break;
      case 'deny':
        await api.del(`/${c.kind}/${source(c.kind)}/access_requests/${user.user.id}`);
        break;
      case 'star':
      case 'unstar':
        await api.post(`/projects/${project.id}/${c.op}`, undefined, { token: user.token });
        break;
      case 'groupAttribute':
        if (c.value === null) await api.del(`/groups/${group.id}/custom_attributes/${c.key}`);
        else await api.put(`/groups/${group.id}/custom_attributes/${c.key}`, { value: c.value });
        break;
      case 'userAttribute':
        if (c.value === null) await api.del(`/users/${user.user.id}/custom_attributes/${c.key}`);
        else await api.put(`/users/${user.user.id}/custom_attributes/${c.key}`, { value: c.value });
        break;
      case 'status':
        await api.put('/user/status', { message: `step ${step}` }, { token: user.token });
        break;
      case 'archive':
      case 'unarchive':
        await api.post(`/projects/${project.id}/${c.op}`);
        break;
      case 'renameGroup':
        await api.put(`/groups/${group.id}`, { path: `idem-${n}-${step}`, name: `Idem ${n} ${step}` });
        break;
      case 'deleteProject':
        await api.del(`/projects/${project.id}`);
        await removalsDone();
        break;
      case 'deleteGroup':
        await api.del(`/groups/${group.id}`);
        await removalsDone();
        break;
      case 'deleteUser':
        await api.del(`/users/${user.user.id}`, { query: { hard_delete: true } });
        break;
    }
  }
}

/**
 * Removals finish asynchronously (reactors): wait for them before the next command, so no
 * command of the sequence runs concurrently with one (their commit order is then the log's).
 */
async function removalsDone() {
  for (let i = 0; i < 3; i++) await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
}

/** The inline rows and the log (gap-free order, as projectors see it), read from one snapshot. */
async function inlineRowsAndLog(): Promise<{ inline: Record<string, unknown[]>; log: ProjectedEvent[] }> {
  const types = [...new Set(PROJECTORS.flatMap((p) => p.handles))];
  return api.handle.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const inline = await snapshotTables(trx, TABLES);
      const rows = await trx.selectFrom('events').selectAll().where('event_type', 'in', types).orderBy('transaction_id').orderBy('global_position').execute();
      return { inline, log: rows.map(toStoredEvent) };
    });
}

describe('projector idempotency', () => {
  it('replaying every event twice, an older event after a newer one, or whole batches twice leaves the rows the inline path wrote', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 1, max: 12 }),
        async (commands, picks, batchSize) => {
          await perform(commands);
          const { inline, log } = await inlineRowsAndLog();

          const twice = await rowsLeftBy(api.handle.db, TABLES, async (trx) => {
            for (const event of log) {
              await applyAll(event, trx);
              await applyAll(event, trx);
            }
          });
          expect(twice, 'every event twice').toEqual(inline);

          // After each event, an earlier event of the same stream again (picked at random).
          let replays = 0;
          const interleaved = await rowsLeftBy(api.handle.db, TABLES, async (trx) => {
            const seen = new Map<string, ProjectedEvent[]>();
            for (const [i, event] of log.entries()) {
              await applyAll(event, trx);
              const earlier = seen.get(event.streamId) ?? [];
              if (earlier.length > 0) {
                await applyAll(earlier[picks[i % picks.length]! % earlier.length]!, trx);
                replays++;
              }
              seen.set(event.streamId, [...earlier, event]);
            }
          });
          expect(interleaved, 'an older event after a newer one').toEqual(inline);
          expect(replays).toBeGreaterThan(0);

          // The batch paths (rebuild and the async worker): pages holding every event twice.
          const doubled = log.flatMap((event) => [event, event]);
          const batched = await rowsLeftBy(api.handle.db, TABLES, async (trx) => {
            for (let i = 0; i < doubled.length; i += batchSize) {
              const page = doubled.slice(i, i + batchSize);
              for (const projector of PROJECTORS) await applyEvents(projector, page, trx);
            }
            // And the whole log once more, as one page.
            for (const projector of PROJECTORS) await applyEvents(projector, log, trx);
          });
          expect(batched, `batches of ${batchSize}, every event twice`).toEqual(inline);
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
    // Each run drives ~20 HTTP commands and three replays of the whole log.
  }, 600_000);
});
