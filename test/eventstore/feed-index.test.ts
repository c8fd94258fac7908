import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAggregate } from '../../src/domain/aggregate.js';
import { AGGREGATES as LIST } from '../../src/domain/aggregates.js';
import { feedIndexOf, feedIndexOfAggregates } from '../../src/commands/kernel/aggregates.js';
import { exportEvents, verifyExport } from '../../src/eventstore/export.js';
import { FEED_COLUMNS } from '../../src/eventstore/feed-index.js';
import { sealPending } from '../../src/eventstore/seal.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tamper, waitUntilReadable } from './audit-support.js';

const AGGREGATES: readonly AnyAggregate[] = LIST;

/**
 * The feed index columns (actor_id, project_id, group_id, target_type, target_id) are
 * outside the hash chain and the seals; `events verify` recomputes them with the aggregates'
 * index functions the append used. A log written through the API, as clients write it.
 */

let api: TestServer;
let alice: { user: { id: number }; token: string };
let bob: { user: { id: number }; token: string };
let group: { id: number };
let project: { id: number };

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  alice = await api.createUser();
  bob = await api.createUser();
  group = await createGroup(api, { token: alice.token });
  project = await createProject(api, { token: alice.token, group });
  await addMember(api, 'groups', group.id, bob.user.id, 30);
  await addMember(api, 'projects', project.id, bob.user.id, 40);
  const environment = await api.post(`/projects/${project.id}/environments`, { name: 'production', external_url: 'https://example.com' }, { token: alice.token });
  expect(environment.status).toBe(201);
  expect((await api.post('/broadcast_messages', { message: 'maintenance tonight' })).status).toBe(201);
  expect((await api.post(`/projects/${project.id}/archive`, undefined, { token: alice.token })).status).toBe(201);
  expect((await api.put(`/groups/${group.id}`, { description: 'renamed by bob' }, { token: alice.token })).status).toBe(200);
  await waitUntilReadable(api.handle.db);
  await sealPending(api.handle.db);
});
afterAll(() => api?.close());

/** The group membership event of bob: every column but project_id is set. */
async function bobsGroupMembership() {
  return api.handle.db
    .selectFrom('events')
    .selectAll()
    .where('stream_id', '=', `members-group-${group.id}`)
    .where('event_type', '=', 'MemberAdded')
    .where('target_id', '=', bob.user.id)
    .executeTakeFirstOrThrow();
}

describe('events verify and the feed index columns', () => {
  it('finds an untouched log written through the API clean, every event recomputed', async () => {
    const report = await verifyLog(api.handle.db, { feedIndex: feedIndexOf });
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, problemCount: 0, unsealedEvents: 0 });
    expect(report.indexesChecked).toBe(report.eventsChecked);
    // The log holds events of many aggregates, and each column is set on some of them.
    const { rows } = await sql<{ types: string; projects: string; groups: string; targets: string; actors: string }>`
      select count(distinct event_type) as types, count(project_id) as projects, count(group_id) as groups,
             count(target_id) as targets, count(distinct actor_id) as actors from events`.execute(api.handle.db);
    expect(Number(rows[0]!.types)).toBeGreaterThanOrEqual(8);
    for (const count of [rows[0]!.projects, rows[0]!.groups, rows[0]!.targets]) expect(Number(count)).toBeGreaterThan(0);
    expect(Number(rows[0]!.actors)).toBeGreaterThanOrEqual(2);
  });

  // Each column edited directly in the database (the trigger off, as a tamperer with table
  // rights would): the hash chain and the seals still hold; only the index check tells.
  const edits = [
    { column: 'actor_id', forged: () => bob.user.id, original: () => 1 },
    { column: 'project_id', forged: () => project.id, original: () => null },
    { column: 'group_id', forged: () => group.id + 1000, original: () => group.id },
    { column: 'target_type', forged: () => 'Project', original: () => 'User' },
    { column: 'target_id', forged: () => alice.user.id, original: () => bob.user.id },
  ] as const;
  for (const edit of edits) {
    it(`finds an edited ${edit.column}, at its event`, async () => {
      const event = await bobsGroupMembership();
      expect(event[edit.column]).toBe(edit.original());
      await tamper(api.handle.db, (trx) => sql`update events set ${sql.ref(edit.column)} = ${edit.forged()} where global_position = ${event.global_position}`.execute(trx));
      try {
        const report = await verifyLog(api.handle.db, { feedIndex: feedIndexOf });
        expect(report.ok).toBe(false);
        expect(report.problems).toEqual([
          {
            kind: 'index_mismatch',
            streamId: `members-group-${group.id}`,
            position: event.global_position,
            column: edit.column,
            stored: edit.forged(),
            recomputed: edit.original(),
            detail: `version ${event.stream_version} (MemberAdded, ${event.event_id}): ${edit.column} is ${JSON.stringify(edit.forged())}, its data and metadata give ${JSON.stringify(edit.original())} — the column was altered`,
          },
        ]);
        // Without the recompute function the edit passes: the columns are outside every digest.
        expect(await verifyLog(api.handle.db)).toMatchObject({ ok: true, indexesChecked: 0 });
      } finally {
        await tamper(api.handle.db, (trx) => sql`update events set ${sql.ref(edit.column)} = ${edit.original()} where global_position = ${event.global_position}`.execute(trx));
      }
      expect((await verifyLog(api.handle.db, { feedIndex: feedIndexOf })).ok).toBe(true);
    });
  }

  it('reports events of a type no aggregate defines rather than skipping them', async () => {
    const withoutMembers = feedIndexOfAggregates(AGGREGATES.filter((a) => a.name !== 'members'));
    const report = await verifyLog(api.handle.db, { feedIndex: withoutMembers });
    const memberEvents = await api.handle.db.selectFrom('events').select(['stream_id', 'global_position', 'event_type']).where('stream_id', 'like', 'members-%').orderBy('stream_id').orderBy('stream_version').execute();
    expect(memberEvents.length).toBe(3); // alice owning the group, bob in the group and in the project
    expect(report.problems.map((p) => [p.kind, p.streamId, p.position])).toEqual(memberEvents.map((e) => ['index_unchecked', e.stream_id, e.global_position]));
    expect(report.problems[0]!.detail).toMatch(new RegExp(`no aggregate defines ${memberEvents[0]!.event_type}, so its feed index cannot be recomputed$`));
    expect(report.indexesChecked).toBe(report.eventsChecked - memberEvents.length);
  });
});

describe('verifyExport and the feed index columns an export carries', () => {
  let lines: string[];
  beforeAll(async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    await exportEvents(api.handle.db, out);
    lines = text.split('\n').filter((line) => line !== '');
  });

  it('recomputes every line clean', async () => {
    const report = await verifyExport(lines, { feedIndex: feedIndexOf });
    expect(report).toMatchObject({ ok: true, problems: [], eventsChecked: lines.length, indexesChecked: lines.length });
  });

  it('finds a column edited in the file, and a line without the columns', async () => {
    const event = await bobsGroupMembership();
    const at = lines.findIndex((line) => JSON.parse(line).global_position === event.global_position);
    const edited = lines.map((line, i) => (i === at ? JSON.stringify({ ...JSON.parse(line), actor_id: bob.user.id }) : line));
    expect((await verifyExport(edited, { feedIndex: feedIndexOf })).problems).toEqual([
      expect.objectContaining({ kind: 'index_mismatch', position: event.global_position, column: 'actor_id', stored: bob.user.id, recomputed: 1 }),
    ]);
    const stripped = lines.map((line, i) => {
      if (i !== at) return line;
      const parsed = JSON.parse(line);
      for (const column of FEED_COLUMNS) delete parsed[column];
      return JSON.stringify(parsed);
    });
    // Bob's membership is the last event of its stream: no version gap follows the dropped line.
    expect((await verifyExport(stripped, { feedIndex: feedIndexOf })).problems).toEqual([
      expect.objectContaining({ kind: 'malformed_line', detail: `line ${at + 1} is not an exported event` }),
    ]);
  });
});
