import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAggregate } from '../../src/domain/aggregate.js';
import { integrationDeliveriesReactor } from '../../src/commands/integration-deliveries.js';
import { sendDueDeliveries, type SenderOptions } from '../../src/commands/integration-delivery-sender.js';
import type { Decider } from '../../src/domain/decider.js';
import type { EventOf } from '../../src/domain/events.js';
import type { ChatMessage, DeliveryTriggers } from '../../src/domain/integrations/deliveries.js';
import { readStream } from '../../src/eventstore/store.js';
import { ProjectionWorker } from '../../src/worker/runner.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';

// ───────────────────────────── A test-only event that triggers deliveries ─────────────────────────────
// No production event type triggers a delivery yet (pushes arrive with issue 12): this aggregate
// stands in for one, in a delivery table of its own; everything else is the real code.

const pushEvents = {
  TestPushed: z.strictObject({ project_id: z.int(), ref: z.string(), tag: z.boolean(), pipeline_status: z.string().optional() }),
};
type TestPushEvent = EventOf<typeof pushEvents>;
type Pushed = TestPushEvent['data'];
const pushDecider: Decider<{ type: 'Push'; data: Pushed }, TestPushEvent, null, string> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [{ type: 'TestPushed', data: command.data }],
};
const pushes = defineAggregate({ name: 'test-pushes', streamId: (id: string) => `test-push-${id}`, events: pushEvents, decider: pushDecider });

/** A push's message, as GitLab's PushMessage words it. */
function pushMessage(data: Pushed, facts: Parameters<NonNullable<DeliveryTriggers<TestPushEvent>['TestPushed']>['message']>[1]): ChatMessage {
  const web = facts.project.webUrl;
  const name = facts.project.pathWithNamespace;
  const user = facts.user?.name ?? 'API';
  return {
    projectName: name,
    userName: user,
    userAvatar: facts.user?.avatarUrl ?? null,
    summary: `${user} pushed to branch [${data.ref}](${web}/commits/${data.ref}) of [${name}](${web}) ([Compare changes](${web}/compare/a...b))`,
    details: { text: `[1234abcd](${web}/commit/1234abcd): Fix the build - ${user}`, color: '#345' },
    activity: { title: `${user} pushed to branch`, subtitle: `to: [${name}](${web})`, text: `[Compare changes](${web}/compare/a...b)`, image: '' },
    ref: { name: data.ref, tag: data.tag },
    ...(data.pipeline_status ? { pipelineStatus: data.pipeline_status } : {}),
  };
}

const TRIGGERS: DeliveryTriggers<TestPushEvent> = {
  TestPushed: { flag: 'push_events', projectId: (d) => d.project_id, message: pushMessage },
};
const reactor = integrationDeliveriesReactor(TRIGGERS, 'test-integration-deliveries');

// ───────────────────────────── A local webhook receiver ─────────────────────────────

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

class Receiver {
  readonly received: Received[] = [];
  /** Statuses to answer per path, in turn (the last one repeats); 200 otherwise. */
  readonly script = new Map<string, number[]>();
  private server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        this.received.push({ path, headers: req.headers, body });
        const statuses = this.script.get(path) ?? [200];
        const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
        res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string) {
    return this.received.filter((r) => r.path === path);
  }

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ───────────────────────────── Harness ─────────────────────────────

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}-${process.pid}`;

let api: TestServer;
let worker: ProjectionWorker;
const receiver = new Receiver();
let me: { id: number; name: string; avatar_url: string | null };
/** The sender's clock: ahead of every row the reactor records, moved by hand for retries. */
let clock: Date;

beforeAll(async () => {
  // The runtime's own sender is off here: each test drives the sender with its clock.
  api = await startTestServer({}, { deliveries: false });
  await settled(api);
  await receiver.start();
  expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
  me = (await api.get('/user')).body;
  worker = new ProjectionWorker(api.handle, { reactors: [reactor], commands: api.runtime.app.commands });
  await worker.catchUp(); // its checkpoint starts at the head
  clock = new Date(Date.now() + 3_600_000);
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
  await api.close();
});

const SENDER: SenderOptions = { backoffMs: 60_000, maxAttempts: 3, timeoutMs: 5_000, now: () => clock };
const send = (options: Partial<SenderOptions> = {}) => sendDueDeliveries(api.handle.db, { ...SENDER, ...options });
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

async function push(projectId: number, data: Partial<Pushed> = {}) {
  const id = unique('push');
  await run({ ctx: api.runtime.app.commands, metadata: { actor_id: me.id } }, pushes, id, { type: 'Push', data: { project_id: projectId, ref: 'main', tag: false, ...data } });
  await reacted(api, worker, id);
}

/**
 * Follows the log until the test reactor has handled the push of stream `id` (its receipt is
 * written): catchUp alone stops at the head it read when called, which on the embedded
 * database was seen to lag behind a push that had just committed.
 */
async function reacted(server: TestServer, follower: ProjectionWorker, id: string) {
  const [event] = await readStream(server.handle.db, `test-push-${id}`);
  for (let tries = 0; ; tries++) {
    await follower.catchUp();
    const receipt = await server.handle.db.selectFrom('reactor_receipts').select('event_id').where('reactor', '=', reactor.name).where('event_id', '=', event!.eventId).executeTakeFirst();
    if (receipt) return;
    if (tries > 1000) throw new Error('the reactor did not handle the push');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const deliveries = (projectId: number) =>
  api.handle.db.selectFrom('integration_deliveries').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

async function projectWith(slug: string, settings: Record<string, unknown>) {
  const project = await createProject(api);
  const saved = await api.put(`/projects/${project.id}/services/${slug}`, settings);
  expect(saved.status, saved.text).toBe(200);
  return { ...project, integrationId: saved.body.id as number };
}

/** What the test message says for a project (Markdown links). */
function expected(project: { path_with_namespace: string }) {
  const web = `${api.url}/${project.path_with_namespace}`;
  const name = project.path_with_namespace;
  return {
    web,
    name,
    summary: `${me.name} pushed to branch [main](${web}/commits/main) of [${name}](${web}) ([Compare changes](${web}/compare/a...b))`,
    slackSummary: `${me.name} pushed to branch <${web}/commits/main|main> of <${web}|${name}> (<${web}/compare/a...b|Compare changes>)`,
    details: `[1234abcd](${web}/commit/1234abcd): Fix the build - ${me.name}`,
    slackDetails: `<${web}/commit/1234abcd|1234abcd>: Fix the build - ${me.name}`,
  };
}

const formPayload = (body: string) => JSON.parse(new URLSearchParams(body).get('payload')!);

// ───────────────────────────── Delivered ─────────────────────────────

describe('a chat webhook gets the body its kind posts in GitLab 12', () => {
  const cases: [slug: string, extra: Record<string, unknown>, contentType: string, body: (e: ReturnType<typeof expected>) => unknown, parse: (body: string) => unknown][] = [
    ['slack', {}, 'application/x-www-form-urlencoded', (e) => ({ text: e.slackSummary, attachments: [{ text: e.slackDetails, color: '#345' }], fallback: null }), formPayload],
    [
      'mattermost',
      { username: 'gitlab-bot', channel: 'town-square' },
      'application/x-www-form-urlencoded',
      (e) => ({ channel: 'town-square', username: 'gitlab-bot', text: e.slackSummary, attachments: [{ text: e.slackDetails, color: '#345' }], fallback: null }),
      formPayload,
    ],
    [
      'microsoft-teams',
      {},
      'application/json',
      (e) => ({
        sections: [
          { activityTitle: `${me.name} pushed to branch`, activitySubtitle: `to: [${e.name}](${e.web})`, activityText: `[Compare changes](${e.web}/compare/a...b)`, activityImage: '' },
          { title: 'Details', facts: [{ name: 'Attachments', value: e.details }] },
        ],
        title: e.name,
        summary: e.summary,
      }),
      JSON.parse,
    ],
    [
      'discord',
      {},
      'application/json',
      (e) => ({
        content: '',
        username: null,
        avatar_url: null,
        tts: false,
        embeds: [
          {
            title: null,
            description: `${e.summary}\n${e.details}`,
            url: null,
            timestamp: null,
            color: null,
            footer: null,
            image: null,
            thumbnail: null,
            video: null,
            provider: null,
            author: { name: me.name, url: null, icon_url: me.avatar_url },
            fields: [],
          },
        ],
      }),
      JSON.parse,
    ],
    ['hangouts-chat', {}, 'application/json', (e) => ({ text: `${e.slackSummary}\n${e.slackDetails}` }), JSON.parse],
    ['unify-circuit', {}, 'application/json', (e) => ({ subject: e.name, text: e.summary, markdown: true }), JSON.parse],
  ];

  it.each(cases)('%s', async (slug, extra, contentType, body, parse) => {
    const hook = `/hooks/${slug}/${unique('secret')}`;
    const project = await projectWith(slug, { webhook: `${receiver.url}${hook}`, ...extra });
    await push(project.id);
    const [row] = await deliveries(project.id);
    expect(row).toMatchObject({ integration_id: project.integrationId, kind: slug, event_type: 'TestPushed', flag: 'push_events', status: 'pending', attempts: 0 });

    expect(await send()).toBeGreaterThanOrEqual(1);
    const [request] = receiver.at(hook);
    expect(receiver.at(hook)).toHaveLength(1);
    expect(request!.headers['content-type']).toBe(contentType);
    expect(parse(request!.body)).toEqual(body(expected(project)));
    // The stored payload is what was sent (the request body before its encoding).
    expect(row!.payload).toEqual(body(expected(project)));
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'delivered', attempts: 1, response_status: 200, last_error: null, next_attempt_at: null });
  });

  it('slack-notifier posts once per channel of a comma-separated list', async () => {
    const hook = `/hooks/channels/${unique('secret')}`;
    const project = await projectWith('slack', { webhook: `${receiver.url}${hook}`, channel: 'general', push_channel: 'dev, ops' });
    await push(project.id);
    expect((await deliveries(project.id)).map((d) => [d.seq, (d.payload as { channel: string }).channel])).toEqual([
      [0, 'dev'],
      [1, 'ops'],
    ]);
    await send();
    expect(receiver.at(hook).map((r) => formPayload(r.body).channel).sort()).toEqual(['dev', 'ops']);
  });
});

// ───────────────────────────── Retries ─────────────────────────────

describe('retries', () => {
  it('a 500 is retried after the backoff and then delivered (2 attempts)', async () => {
    const hook = `/hooks/flaky/${unique('secret')}`;
    receiver.script.set(hook, [500, 200]);
    const project = await projectWith('slack', { webhook: `${receiver.url}${hook}` });
    await push(project.id);
    await send();
    const [first] = await deliveries(project.id);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, response_status: 500, last_error: 'the webhook answered 500' });
    expect(first!.next_attempt_at!.getTime() - first!.last_attempt_at!.getTime()).toBe(SENDER.backoffMs);

    await send(); // not due yet
    expect(receiver.at(hook)).toHaveLength(1);
    advance(SENDER.backoffMs);
    await send();
    expect(receiver.at(hook)).toHaveLength(2);
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'delivered', attempts: 2, response_status: 200, last_error: null });
  });

  it('a 429 is retried, a 404 fails at once', async () => {
    const limited = `/hooks/limited/${unique('secret')}`;
    const gone = `/hooks/gone/${unique('secret')}`;
    receiver.script.set(limited, [429]);
    receiver.script.set(gone, [404]);
    const a = await projectWith('slack', { webhook: `${receiver.url}${limited}` });
    const b = await projectWith('discord', { webhook: `${receiver.url}${gone}` });
    await push(a.id);
    await push(b.id);
    await send();
    expect((await deliveries(a.id))[0]).toMatchObject({ status: 'pending', attempts: 1, response_status: 429 });
    expect((await deliveries(b.id))[0]).toMatchObject({ status: 'failed', attempts: 1, response_status: 404, last_error: 'the webhook answered 404', next_attempt_at: null });
  });

  it('senders running at once send each delivery once (for update skip locked)', async () => {
    const hook = `/hooks/concurrent/${unique('secret')}`;
    const project = await projectWith('slack', { webhook: `${receiver.url}${hook}`, push_channel: 'a,b,c,d,e,f' });
    await push(project.id);
    await Promise.all([send({ batchSize: 1 }), send({ batchSize: 1 }), send({ batchSize: 2 })]);
    expect(receiver.at(hook)).toHaveLength(6);
    expect((await deliveries(project.id)).map((d) => [d.status, d.attempts])).toEqual(Array(6).fill(['delivered', 1]));
  });

  it('an unreachable webhook is tried maxAttempts times with doubling delays, then failed', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const webhook = `http://127.0.0.1:${port}/hooks/${unique('secret')}`;
    const project = await projectWith('hangouts-chat', { webhook });

    await push(project.id);
    const delays: number[] = [];
    for (let attempt = 1; attempt <= SENDER.maxAttempts; attempt++) {
      await send();
      const [row] = await deliveries(project.id);
      expect(row!.attempts).toBe(attempt);
      expect(row!.last_error).toMatch(/ECONNREFUSED/);
      if (row!.status === 'pending') {
        delays.push(row!.next_attempt_at!.getTime() - row!.last_attempt_at!.getTime());
        advance(delays.at(-1)!);
      }
    }
    expect(delays).toEqual([SENDER.backoffMs, 2 * SENDER.backoffMs]);
    const [row] = await deliveries(project.id);
    expect(row).toMatchObject({ status: 'failed', attempts: SENDER.maxAttempts, response_status: null, next_attempt_at: null });
    expect(row!.last_error).not.toContain(webhook);
  });
});

// ───────────────────────────── The SSRF guard at send time ─────────────────────────────

describe('the SSRF guard runs again when sending', () => {
  const setAllowLocal = async (on: boolean) =>
    expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: on })).status).toBe(200);

  it('with local requests no longer allowed, a local webhook is refused: failed, nothing received', async () => {
    const hook = `/hooks/refused/${unique('secret')}`;
    const project = await projectWith('microsoft-teams', { webhook: `${receiver.url}${hook}` });
    await push(project.id);
    await setAllowLocal(false);
    try {
      await send();
    } finally {
      await setAllowLocal(true);
    }
    expect(receiver.at(hook)).toEqual([]);
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'failed', attempts: 1, response_status: null, last_error: 'is blocked: Requests to localhost are not allowed' });
  });

  it('a host that resolves elsewhere when connecting (DNS rebinding) gets no request', async () => {
    const hook = `/hooks/rebinding/${unique('secret')}`;
    const port = new URL(receiver.url).port;
    // Saved while local requests are allowed; the name is only ever resolved by the resolver below.
    const project = await projectWith('unify-circuit', { webhook: `http://rebinding.test:${port}${hook}` });
    await push(project.id);
    await setAllowLocal(false);
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    try {
      await send({ resolve: async () => answers.shift() ?? ['127.0.0.1'] });
    } finally {
      await setAllowLocal(true);
    }
    expect(answers).toEqual([]); // checked before the request and again by the connection's own lookup
    expect(receiver.at(hook)).toEqual([]);
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'failed', last_error: 'is blocked: Requests to localhost are not allowed' });
  });

  it.each([
    ['an IPv4-compatible', '::7f00:1', 'Requests to localhost are not allowed'],
    ['a NAT64', '64:ff9b::a00:5', 'Requests to the local network are not allowed'],
    ['a 6to4', '2002:a9fe:a9fe::1', 'Requests to the link local network are not allowed'],
  ])('a host that resolves to %s address of a local one (%s) gets no request', async (_form, address, reason) => {
    const hook = `/hooks/embedded/${unique('secret')}`;
    const port = new URL(receiver.url).port;
    const project = await projectWith('slack', { webhook: `http://embedded.test:${port}${hook}` });
    await push(project.id);
    await setAllowLocal(false);
    try {
      await send({ resolve: async () => [address] });
    } finally {
      await setAllowLocal(true);
    }
    expect(receiver.at(hook)).toEqual([]);
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'failed', attempts: 1, response_status: null, last_error: `is blocked: ${reason}` });
  });
});

// ───────────────────────────── Who gets a delivery ─────────────────────────────

describe('which integrations get a delivery', () => {
  it('none for an inactive integration or one with the flag off', async () => {
    const off = await projectWith('slack', { webhook: `${receiver.url}/hooks/off`, push_events: false });
    const deleted = await projectWith('slack', { webhook: `${receiver.url}/hooks/deleted` });
    expect((await api.del(`/projects/${deleted.id}/services/slack`)).status).toBe(204);
    await push(off.id);
    await push(deleted.id);
    expect(await deliveries(off.id)).toEqual([]);
    expect(await deliveries(deleted.id)).toEqual([]);
  });

  it('a kind that does not send over HTTP gets its delivery recorded, never sent', async () => {
    const project = await projectWith('pivotaltracker', { token: unique('token') });
    await push(project.id);
    const [row] = await deliveries(project.id);
    expect(row).toMatchObject({ kind: 'pivotaltracker', status: 'recorded', attempts: 0, next_attempt_at: null });
    expect(row!.payload).toMatchObject({ projectName: project.path_with_namespace, ref: { name: 'main', tag: false } });
    await send();
    expect((await deliveries(project.id))[0]).toMatchObject({ status: 'recorded', attempts: 0 });
  });

  it('chat kinds honour branches_to_be_notified and notify_only_broken_pipelines', async () => {
    const protectedOnly = await projectWith('slack', { webhook: `${receiver.url}/hooks/protected`, branches_to_be_notified: 'protected' });
    expect((await api.post(`/projects/${protectedOnly.id}/protected_branches`, { name: 'release/*' })).status).toBe(201);
    await push(protectedOnly.id, { ref: 'feature' });
    await push(protectedOnly.id, { ref: 'release/1.0' });
    await push(protectedOnly.id, { ref: 'v1.0', tag: true });
    expect((await deliveries(protectedOnly.id)).map((d) => (d.payload as { text: string }).text.match(/branch <[^|]*\|([^>]*)>/)?.[1])).toEqual(['release/1.0', 'v1.0']);

    const broken = await projectWith('mattermost', { webhook: `${receiver.url}/hooks/broken`, notify_only_broken_pipelines: true });
    await push(broken.id, { pipeline_status: 'success' });
    await push(broken.id, { pipeline_status: 'running' });
    await push(broken.id, { pipeline_status: 'failed' });
    expect(await deliveries(broken.id)).toHaveLength(1);
  });

  it('is idempotent: the reactor seeing an event twice records it once', async () => {
    const project = await projectWith('discord', { webhook: `${receiver.url}/hooks/twice/${unique('secret')}` });
    const id = unique('push');
    await run({ ctx: api.runtime.app.commands, metadata: { actor_id: me.id } }, pushes, id, { type: 'Push', data: { project_id: project.id, ref: 'main', tag: false } });
    const [event] = await readStream(api.handle.db, `test-push-${id}`);
    await reactor.react(event!, api.runtime.app.commands);
    await reactor.react(event!, api.runtime.app.commands);
    await worker.catchUp(); // and the worker, which sees it a third time
    expect(await deliveries(project.id)).toHaveLength(1);
  });
});

// ───────────────────────────── Secrets ─────────────────────────────

it('the webhook URL is in no delivery row', async () => {
  const secret = unique('very-secret-path');
  const project = await projectWith('slack', { webhook: `${receiver.url}/hooks/${secret}` });
  await push(project.id);
  await send();
  expect(receiver.received.some((r) => r.path.includes(secret))).toBe(true);
  const rows = await sql<{ text: string }>`select row_to_json(d)::text as text from integration_deliveries d`.execute(api.handle.db);
  expect(rows.rows.length).toBeGreaterThan(0);
  expect(rows.rows.map((r) => r.text).join('\n')).not.toContain(secret);
});

// ───────────────────────────── In the runtime ─────────────────────────────

describe('the runtime sender', () => {
  let live: TestServer;
  let liveWorker: ProjectionWorker;
  const lines: string[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    live = await startTestServer({}, { logger });
    await settled(live);
    expect((await live.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
    liveWorker = new ProjectionWorker(live.handle, { reactors: [reactor], commands: live.runtime.app.commands });
    await liveWorker.catchUp();
  });
  afterAll(async () => {
    await liveWorker.stop();
    await live.close();
  });

  it('wakes when the reactor records a delivery and sends it; its log lines hold no webhook URL', async () => {
    const secret = unique('live-secret');
    const hook = `/hooks/live/${secret}`;
    const project = await createProject(live);
    expect((await live.put(`/projects/${project.id}/services/slack`, { webhook: `${receiver.url}${hook}` })).status).toBe(200);
    const user = (await live.get('/user')).body;
    const id = unique('push');
    await run({ ctx: live.runtime.app.commands, metadata: { actor_id: user.id } }, pushes, id, { type: 'Push', data: { project_id: project.id, ref: 'main', tag: false } });
    await reacted(live, liveWorker, id);
    for (let waited = 0; receiver.at(hook).length === 0; waited += 20) {
      if (waited > 10_000) throw new Error('the runtime sender did not send');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (let waited = 0; !lines.some((l) => l.includes('integration delivery delivered')); waited += 20) {
      if (waited > 10_000) throw new Error('no log line for the delivery');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [row] = await live.handle.db.selectFrom('integration_deliveries').selectAll().where('project_id', '=', project.id).execute();
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, response_status: 200 });
    expect(lines.join('\n')).not.toContain(secret);
  });
});
