/**
 * 8. Feeds (bench/README.md): the activity and audit feeds are queries over the event log, so it is
 * timed over a big log — BENCH_FEED_EVENTS (1,000,000) events seeded straight into the log
 * (appendToStream in large batches, NOT through HTTP: members and project events with their
 * aggregates' own index columns, spread over BENCH_FEED_PROJECTS projects and the seeded users),
 * then GET /projects/:id/events and GET /audit_events at 1 connection. Target: p90 < 20 ms.
 */
import { sql } from 'kysely';
import { hashPassword } from '../src/security/secrets.js';
import type { Db } from '../src/database/database.js';
import { memberEventIndex, membersStreamId, type MemberEvent } from '../src/domain/members.js';
import { projectEventIndex, projectStreamId, type ProjectEvent } from '../src/domain/projects/events.js';
import { GENESIS_HASH, appendToStream } from '../src/eventstore/store.js';
import { currentSchemaVersion } from '../src/eventstore/upcasters.js';
import { sealPending } from '../src/eventstore/seal.js';
import { startApp } from './harness/app.js';
import type { LoadGenerator } from './harness/load-generator.js';
import { log, round } from './harness/meters.js';
import { inParallel, createDatabase, type Cleanups } from './harness/setup.js';
import { SECONDS } from './harness/settings.js';
import type { Row } from './harness/table.js';
import { createUsersDirect } from './harness/users.js';

const num = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number(v));
export const FEED_EVENTS = num(process.env.BENCH_FEED_EVENTS, 1_000_000);
export const FEED_PROJECTS = num(process.env.BENCH_FEED_PROJECTS, 2_500);
const FEED_USERS = 200;
/** Events per append (one stream each), and appends at once. */
const BATCH = 250;
const PARALLEL = 4;
const P90_TARGET_MS = 20;

export interface FeedSeed {
  events: number;
  seconds: number;
  /** Projects that exist (made over HTTP) and whose ids the seeded events use among the others. */
  projectIds: number[];
  userIds: number[];
}

type Seeded = MemberEvent | ProjectEvent;

/** A realistic mix for one stream: members' joins, leaves and requests, projects' edits and stars. */
function eventsFor(kind: 'members' | 'project', projectId: number, users: readonly number[], count: number, offset: number): Seeded[] {
  const user = (i: number) => users[(projectId * 7 + offset + i) % users.length]!;
  return Array.from({ length: count }, (_, i): Seeded => {
    const source = { source_type: 'Project' as const, source_id: projectId, user_id: user(i) };
    if (kind === 'members') {
      switch (i % 4) {
        case 0:
        case 1:
          return { type: 'MemberAdded', data: { ...source, access_level: 30, expires_at: null, created_by_id: users[0]! } };
        case 2:
          return { type: 'MemberRemoved', data: { ...source, reason: 'removed' } };
        default:
          return { type: 'AccessRequested', data: source };
      }
    }
    switch (i % 3) {
      case 0:
        return {
          type: 'ProjectUpdated',
          data: {
            id: projectId,
            changes: { description: `edit ${offset + i}` },
            path_with_namespace: `bench/p${projectId}`,
            name_with_namespace: `bench / p${projectId}`,
            previous: { visibility: 'private', path_with_namespace: `bench/p${projectId}`, name_with_namespace: `bench / p${projectId}` },
          },
        };
      case 1:
        return { type: 'ProjectStarred', data: { id: projectId, user_id: user(i) } };
      default:
        return { type: 'ProjectUnstarred', data: { id: projectId, user_id: user(i) } };
    }
  });
}

async function headOf(db: Db, streamId: string): Promise<{ version: number; hash: string }> {
  const row = await db.selectFrom('events').select(['stream_version', 'hash']).where('stream_id', '=', streamId).orderBy('stream_version', 'desc').limit(1).executeTakeFirst();
  return row ? { version: row.stream_version, hash: row.hash } : { version: 0, hash: GENESIS_HASH };
}

/**
 * Seeds `events` events into the log through appendToStream (hash chain and index columns
 * as a command's append writes them; no projection runs): half in `members-project-<id>`
 * streams, half in `project-<id>` streams, over `projectIds` and as many more ids again
 * (projects the feed never shows), authored by `userIds`, a minute apart per stream batch.
 */
export async function seedFeedLog(db: Db, options: { events: number; projectIds: readonly number[]; otherProjects: number; userIds: readonly number[] }): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  const ids = [...options.projectIds, ...Array.from({ length: options.otherProjects }, (_, i) => 10_000_000 + i)];
  const perStream = Math.max(1, Math.floor(options.events / (ids.length * 2)));
  const jobs = ids.flatMap((id) => [
    { kind: 'members' as const, id },
    { kind: 'project' as const, id },
  ]);
  let events = 0;
  await inParallel(jobs, PARALLEL, async ({ kind, id }) => {
    const streamId = kind === 'members' ? membersStreamId({ type: 'Project', id }) : projectStreamId(id);
    for (let done = 0; done < perStream; done += BATCH) {
      const batch = eventsFor(kind, id, options.userIds, Math.min(BATCH, perStream - done), done);
      await db.transaction().execute(async (trx) => {
        const head = await headOf(trx, streamId);
        await appendToStream(trx, {
          streamId,
          expectedVersion: head.version,
          headHash: head.hash,
          events: batch.map((event) => ({
            type: event.type,
            data: event.data,
            schemaVersion: currentSchemaVersion(event.type),
            index: event.type.startsWith('Project') ? projectEventIndex(event as ProjectEvent) : memberEventIndex(event as MemberEvent),
          })),
          metadata: { actor_id: options.userIds[0]!, actor_username: 'bench', request_id: null },
          occurredAt: new Date(Date.now() - (perStream - done) * 60_000),
        });
      });
      events += batch.length;
    }
  });
  await sql`analyze events`.execute(db);
  return { events, seconds: (performance.now() - started) / 1000 };
}

export interface FeedFigure {
  name: string;
  total: string;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
}

export interface FeedFigures {
  seed: FeedSeed;
  logEvents: number;
  feeds: FeedFigure[];
}

export async function measureFeeds(gen: LoadGenerator, database: string, cleanups: Cleanups): Promise<FeedFigures> {
  const name = `${database}_feeds`;
  log(`feeds: ${FEED_EVENTS} events over ${FEED_PROJECTS} projects in database ${name}…`);
  const { url } = await createDatabase(name, cleanups);
  const app = await startApp(url, cleanups);
  const headers = { 'PRIVATE-TOKEN': app.rootToken };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${app.base}/api/v4${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ id: number }>;
  };
  const userIds = await createUsersDirect(app.runtime.app.commands, FEED_USERS, await hashPassword('benchmark-password'), `feed_${Date.now().toString(36)}`);
  const projectIds: number[] = [];
  for (let i = 0; i < 5; i++) projectIds.push((await post('/projects', { name: `bench-feed-${i}`, visibility: 'private' })).id);
  log(`  seeding the log straight through appendToStream (not HTTP), ${PARALLEL} transactions at once…`);
  const seeded = await seedFeedLog(app.handle.db, { events: FEED_EVENTS, projectIds, otherProjects: FEED_PROJECTS - projectIds.length, userIds });
  const logEvents = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(app.handle.db)).rows[0]!.n);
  log(`  seeded ${seeded.events} events in ${round(seeded.seconds, 1)} s (${round(seeded.events / seeded.seconds)} events/s); the log holds ${logEvents}`);
  // The sealer would otherwise hash the seeded log while the feed is timed.
  await sealPending(app.handle.db);

  const feeds: FeedFigure[] = [];
  const project = projectIds[0]!;
  const paths = [
    `/api/v4/projects/${project}/events`,
    `/api/v4/projects/${project}/events?action=joined&sort=asc&page=3`,
    '/api/v4/audit_events',
    `/api/v4/audit_events?entity_type=Project&entity_id=${project}&page=2`,
  ];
  for (const path of paths) {
    const probe = await fetch(`${app.base}${path}`, { headers });
    if (probe.status !== 200) throw new Error(`GET ${path}: ${probe.status} ${await probe.text()}`);
    // Past the count limit (10,000) a feed answers without X-Total, as GitLab does.
    const total = probe.headers.get('x-total') ?? '> 10,000';
    log(`  GET ${path} (X-Total ${total}) at 1 connection for ${SECONDS} s…`);
    const r = await gen.run({ url: app.base, requests: [{ method: 'GET', path, headers }], connections: 1, seconds: SECONDS });
    feeds.push({ name: `GET ${path.replaceAll(String(project), ':id')}`, total, rps: round(r.rps), p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, non2xx: r.non2xx });
  }
  await app.close();
  return { seed: { ...seeded, projectIds, userIds }, logEvents, feeds };
}

export function feedRows(f: FeedFigures): Row[] {
  return [
    `8. Feeds — activity and audit events over a log of ${f.logEvents} events (${f.seed.events} seeded through appendToStream, not HTTP, in ${round(f.seed.seconds, 1)} s); 1 connection`,
    ...f.feeds.map((x) => [
      `${x.name} (X-Total ${x.total})`,
      String(x.rps),
      x.p50.toFixed(1),
      x.p90.toFixed(1),
      x.p99.toFixed(1),
      '',
      `p90 < ${P90_TARGET_MS} ms: ${x.p90 < P90_TARGET_MS ? 'ok' : 'NOT MET'}`,
      x.non2xx ? `NON-2XX ${x.non2xx}` : '',
    ]),
  ];
}

export const feedsJson = (f: FeedFigures) => ({ logEvents: f.logEvents, seed: { events: f.seed.events, seconds: f.seed.seconds }, feeds: f.feeds, targets: { p90Ms: P90_TARGET_MS } });
