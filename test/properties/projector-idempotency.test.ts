import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membersProjector } from '../../src/projections/members/projector.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { settled } from '../support/fixtures.js';
import { describeMismatches, replayLog } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Projectors are idempotent (DESIGN.md, "Read path"; issue 9 §3): random command sequences go
 * through the real command path (HTTP), then the whole log is replayed into fresh tables —
 * every event twice, an older event of a stream again after a newer one (picked at random),
 * and the batch paths with every event twice, in pages of a random size — and each replay must
 * leave exactly the rows the inline path wrote (replayLog, which every test server's close
 * runs too over its own log, with fixed picks).
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

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

describe('projector idempotency', () => {
  it('replaying every event twice, an older event after a newer one, or whole batches twice leaves the rows the inline path wrote', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 5, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 1, max: 12 }),
        async (commands, picks, batchSize) => {
          await perform(commands);
          const report = await replayLog(api.handle, { pickEarlier: (i, count) => picks[i % picks.length]! % count, batchSize });
          expect(describeMismatches(report.mismatches)).toBe('');
          expect(report.reapplied).toBeGreaterThan(0);
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
    // Each run drives ~20 HTTP commands and two replays of the whole log.
  }, 600_000);

  it('finds the tables a replay leaves otherwise, and shows their first differing rows', async () => {
    await perform([{ op: 'add', kind: 'groups', who: 0, level: 30 }]);
    const report = await replayLog(api.handle, { pickEarlier: () => 0, batchSize: 7 }, PROJECTORS.filter((p) => p !== membersProjector));
    expect(report.exercised).not.toContain('members');
    const members = report.mismatches.filter((m) => m.table === 'members');
    expect(members.map((m) => m.replay)).toEqual([
      'every event twice in a row, then an earlier event of its stream again',
      'the batch paths, pages of 7 holding every event twice',
    ]);
    expect(members[0]!.onlyReplayed).toEqual([]);
    // Nothing replayed the memberships: the rows shown are the first five of all of them, in
    // the order of their text (the file's earlier, random worlds decide how many there are).
    const { rows: first } = await sql<{ r: Record<string, unknown> }>`select to_jsonb(m) as r from members m order by to_jsonb(m)::text limit 5`.execute(api.handle.db);
    expect(members[0]!.onlyInline).toEqual(first.map((row) => row.r));
    expect((await sql<{ n: number }>`select count(*)::int as n from members where source_type = 'Namespace' and access_level = 30`.execute(api.handle.db)).rows[0]!.n).toBeGreaterThan(0);
    expect(describeMismatches(members)).toContain('every event twice in a row, then an earlier event of its stream again: table members (projector members) is not what the inline path wrote\n  only inline:   {');
  });
});
