import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type GeoConfig } from '../../src/config.js';
import { feedIndexOf } from '../../src/commands/kernel/aggregates.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { GeoReplicator } from '../../src/geo/replicator.js';
import { tamper, waitUntilReadable } from '../eventstore/audit-support.js';
import { createProject } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A primary and a secondary, two forgelogs in this process on two databases: the secondary
 * follows the primary's log over HTTP, applies it to its own, and reports its status.
 */

const SECRET = 'geo-secret-for-tests-0123456789abcdef';
const geo = (overrides: Partial<GeoConfig>): GeoConfig => ({ ...loadConfig({}).geo, secret: SECRET, pollIntervalMs: 20, statusIntervalMs: 50, ...overrides });

let primary: TestServer;
let secondary: TestServer;
/** The secondary's follower, driven by hand so each step is seen. */
let replicator: GeoReplicator;
let primaryNode: any;
let secondaryNode: any;

beforeAll(async () => {
  primary = await startTestServer({ geo: geo({ nodeName: 'primary' }) });
  primaryNode = (await primary.post('/geo_nodes', { name: 'primary', url: primary.url, primary: true })).body;
  secondaryNode = (await primary.post('/geo_nodes', { name: 'secondary', url: 'http://secondary.example.com' })).body;
  secondary = await startTestServer({ geo: geo({ nodeName: 'secondary', secondary: true, primaryUrl: primary.url }) }, { replicate: false });
  const { runtime } = secondary;
  replicator = new GeoReplicator({
    db: runtime.handle.db,
    geo: runtime.config.geo,
    inlineProjectors: runtime.app.commands.inlineProjectors,
    notifier: runtime.notifier,
    logger: pino({ level: 'silent' }),
    now: runtime.app.commands.now,
  });
});
afterAll(async () => {
  await secondary?.close();
  await primary?.close();
});

/** Applies pages until the secondary has caught up (or stopped at a failure). */
async function catchUp() {
  // On a shared PostgreSQL cluster a transaction running anywhere holds the gap-free horizon back a moment.
  await waitUntilReadable(primary.handle.db);
  for (let i = 0; i < 100; i++) if (await replicator.replicateOnce()) return;
  throw new Error('the secondary did not catch up');
}

const statusOnSecondary = async () => (await secondary.get(`/geo_nodes/${secondaryNode.id}/status`)).body;
const primaryHead = async () => {
  await waitUntilReadable(primary.handle.db);
  return (await primary.get(`/geo_nodes/${primaryNode.id}/status`)).body.last_event_id as number;
};

/** Each stored column of the log, in gap-free order, but the transaction id (each database's own). */
async function logOf(server: TestServer) {
  const { rows } = await sql<Record<string, unknown>>`
    select global_position, stream_id, stream_version, event_id, event_type, schema_version, data, metadata,
           actor_id, project_id, group_id, target_type, target_id, occurred_at, hash
      from events order by transaction_id, global_position`.execute(server.handle.db);
  return rows;
}

describe('a Geo secondary', () => {
  it('starts empty and catches up with the primary’s log: the same events, ids and hashes, verified', async () => {
    const project = await createProject(primary);
    expect(await secondary.handle.db.selectFrom('events').select('global_position').execute()).toEqual([]);
    await catchUp();
    expect(await logOf(secondary)).toEqual(await logOf(primary));
    const report = await verifyLog(secondary.handle.db, { feedIndex: feedIndexOf });
    expect(report.problems).toEqual([]);
    expect(report.eventsChecked).toBeGreaterThan(0);
    // Its read tables are the primary's: root's token, the project, the nodes.
    expect(await secondary.get(`/projects/${project.id}`)).toMatchObject({ status: 200, body: { id: project.id, name: project.name } });
    expect((await secondary.get('/geo_nodes')).body.map((n: any) => [n.name, n.current])).toEqual([
      ['primary', false],
      ['secondary', true],
    ]);
    const status = await statusOnSecondary();
    expect(status).toMatchObject({
      geo_node_id: secondaryNode.id,
      healthy: true,
      health: 'Healthy',
      health_status: 'Healthy',
      last_event_id: await primaryHead(),
      cursor_last_event_id: await primaryHead(),
      db_replication_lag_seconds: 0,
      projects_count: 1,
      repositories_synced_count: 1,
      repositories_failed_count: 0,
      repositories_synced_in_percentage: '100.00%',
    });
    expect(status.cursor_last_event_timestamp).toBe(status.last_event_timestamp);
  });

  it('sees the primary move ahead, then its cursor catches up after the writes', async () => {
    const before = await statusOnSecondary();
    await createProject(primary);
    await createProject(primary);
    const head = await primaryHead();
    expect(head).toBeGreaterThan(before.last_event_id);
    // Until it reads the primary again, the secondary is where it was.
    expect(await statusOnSecondary()).toMatchObject({ cursor_last_event_id: before.cursor_last_event_id, projects_count: 1 });
    await catchUp();
    const after = await statusOnSecondary();
    expect(after).toMatchObject({ last_event_id: head, cursor_last_event_id: head, projects_count: 3, db_replication_lag_seconds: 0 });
    expect(await logOf(secondary)).toEqual(await logOf(primary));
  });

  it('posts its status to the primary, which shows it in GET /geo_nodes/status', async () => {
    expect(await replicator.postStatus()).toBe(true);
    const all = await primary.get('/geo_nodes/status');
    expect(all.status).toBe(200);
    expect(all.body.map((s: any) => s.geo_node_id)).toEqual([primaryNode.id, secondaryNode.id]);
    const [own, reported] = all.body;
    expect(reported).toMatchObject({ geo_node_id: secondaryNode.id, healthy: true, cursor_last_event_id: own.last_event_id, last_event_id: own.last_event_id, projects_count: 3 });
    expect((await primary.get(`/geo_nodes/${secondaryNode.id}/status`)).body).toEqual(reported);
    expect(own).toMatchObject({ replication_slots_count: 1, replication_slots_used_count: 1, replication_slots_used_in_percentage: '100.00%' });
  });

  it('records an event it cannot apply as a failure, stays there, and goes on once the event verifies', async () => {
    const project = await createProject(primary);
    const created = await primary.handle.db.selectFrom('events').select(['global_position', 'data']).where('stream_id', '=', `project-${project.id}`).orderBy('stream_version').executeTakeFirstOrThrow();
    // The primary's copy of the event is edited behind the log's back: its hash no longer verifies.
    await tamper(primary.handle.db, (trx) => sql`update events set data = jsonb_set(data, '{name}', '"edited"') where global_position = ${created.global_position}`.execute(trx));
    await catchUp();
    await catchUp();
    const status = await statusOnSecondary();
    expect(status).toMatchObject({
      healthy: false,
      health_status: 'Unhealthy',
      health: expect.stringContaining(`Could not apply event ${created.global_position}`),
      repositories_failed_count: 1,
      repositories_verification_failed_count: 1,
      repositories_checksum_mismatch_count: 1,
    });
    expect(status.cursor_last_event_id).toBeLessThan(status.last_event_id);
    expect((await secondary.get(`/projects/${project.id}`)).status).toBe(404);
    const failures = await secondary.get('/geo_nodes/current/failures', { query: { failure_type: 'verification' } });
    expect(failures.status).toBe(200);
    expect(failures.body).toEqual([
      {
        project_id: project.id,
        last_repository_synced_at: expect.any(String),
        last_repository_successful_sync_at: null,
        last_wiki_synced_at: null,
        last_wiki_successful_sync_at: null,
        repository_retry_count: 2,
        wiki_retry_count: null,
        last_repository_sync_failure: null,
        last_wiki_sync_failure: null,
        last_repository_verification_failure: 'the event does not match its hash',
        last_wiki_verification_failure: null,
        repository_verification_checksum_sha: expect.stringMatching(/^[0-9a-f]{64}$/),
        wiki_verification_checksum_sha: null,
        repository_checksum_mismatch: true,
        wiki_checksum_mismatch: false,
      },
    ]);
    expect((await secondary.get('/geo_nodes/current/failures', { query: { failure_type: 'checksum_mismatch' } })).body).toHaveLength(1);
    expect((await secondary.get('/geo_nodes/current/failures')).body).toEqual([]);
    expect((await secondary.get('/geo_nodes/current/failures', { query: { type: 'wiki', failure_type: 'verification' } })).body).toEqual([]);
    expect(await secondary.get('/geo_nodes/current/failures', { query: { failure_type: 'other' } })).toMatchObject({ status: 404, body: { message: '404 Failure type unknown Not Found' } });

    // Put back as it was: the event applies, its failure is gone, the cursor catches up.
    await tamper(primary.handle.db, (trx) => sql`update events set data = ${JSON.stringify(created.data)}::jsonb where global_position = ${created.global_position}`.execute(trx));
    await catchUp();
    expect(await statusOnSecondary()).toMatchObject({ healthy: true, repositories_failed_count: 0, cursor_last_event_id: await primaryHead() });
    expect((await secondary.get('/geo_nodes/current/failures', { query: { failure_type: 'verification' } })).body).toEqual([]);
    expect((await secondary.get(`/projects/${project.id}`)).status).toBe(200);
  });

  it('says why when the primary cannot be read', async () => {
    const stranger = new GeoReplicator({
      db: secondary.handle.db,
      geo: { ...secondary.runtime.config.geo, nodeName: 'not-a-node' },
      inlineProjectors: [],
      notifier: secondary.runtime.notifier,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
    });
    await expect(stranger.replicateOnce()).rejects.toThrow(/401/);
  });
});

describe('forgelog serve --geo-secondary: the follower in the runtime', () => {
  it('follows by itself and reports to the primary', async () => {
    const live = await startTestServer({ geo: geo({ nodeName: 'secondary', secondary: true, primaryUrl: primary.url }) });
    try {
      await createProject(primary);
      const head = await primaryHead();
      const deadline = Date.now() + 30_000;
      let status: any;
      do {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await live.get(`/geo_nodes/${secondaryNode.id}/status`)).body;
      } while (status?.cursor_last_event_id !== head && Date.now() < deadline);
      expect(status).toMatchObject({ cursor_last_event_id: head, last_event_id: head, healthy: true });
      expect(await logOf(live)).toEqual(await logOf(primary));
    } finally {
      await live.close();
    }
  });
});
