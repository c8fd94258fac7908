import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { DELIVERY_TRIGGERS } from '../../src/domain/integrations/deliveries.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';
import { run } from '../../src/commands/kernel/run.js';
import { mergeRequests } from '../../src/domain/merge-requests/aggregate.js';

// Merge requests opened, closed and reopened through the API (and merged by the merge
// command: PUT …/merge is another branch's) notify the project's chat integrations through
// the production delivery table and the runtime's `integration-deliveries` reactor; the
// sender, driven here with its own clock, posts them to a local receiver.

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}x${process.pid}`;

let api: TestServer;
const receiver = new WebhookReceiver();
let me: { id: number; name: string; username: string; avatar_url: string };
const clock = new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  // The runtime's sender is off: each test sends with the clock above.
  api = await startTestServer({}, { deliveries: false });
  await settled(api);
  await receiver.start();
  expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
  me = (await api.get('/user')).body;
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

const SENDER = orderedSender(clock);
const send = () => sendDueDeliveries(api.handle.db, SENDER);
const formPayload = (body: string) => JSON.parse(new URLSearchParams(body).get('payload')!);
const deliveries = (projectId: number) => api.handle.db.selectFrom('integration_deliveries').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

/** Waits until the production reactor has handled the latest event of a stream of the types it handles (it keeps no receipt of the others). */
async function reacted(streamId: string) {
  const last = await api.handle.db
    .selectFrom('events')
    .select('event_id')
    .where('stream_id', '=', streamId)
    .where('event_type', 'in', Object.keys(DELIVERY_TRIGGERS))
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  // Up to 30 s: on a loaded machine (PostgreSQL, other suites) the worker can lag behind.
  await eventually(
    () => api.handle.db.selectFrom('reactor_receipts').select('event_id').where('reactor', '=', 'integration-deliveries').where('event_id', '=', last.event_id).executeTakeFirst(),
    30_000,
  );
}

/** A project with `master` and `feature` (one commit ahead), its integrations set with push_events off. */
async function projectWith(integrations: Record<string, Record<string, unknown>>) {
  const project = await createProject(api);
  for (const [slug, settings] of Object.entries(integrations)) {
    const saved = await api.put(`/projects/${project.id}/services/${slug}`, { push_events: false, ...settings });
    expect(saved.status, saved.text).toBe(200);
  }
  const action = (path: string) => [{ action: 'create', file_path: path, content: 'x\n' }];
  expect((await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'Start', actions: action('a') })).status).toBe(201);
  expect((await api.post(`/projects/${project.id}/repository/commits`, { branch: 'feature', start_branch: 'master', commit_message: 'More', actions: action('b') })).status).toBe(201);
  // With push_events off these pushes deliver nothing (the last test checks the rows).
  const web = `${api.url}/${project.path_with_namespace}`;
  return { ...project, web };
}

const mrs = (projectId: number) => `/projects/${projectId}/merge_requests`;

async function open(projectId: number, title: string) {
  const res = await api.post(mrs(projectId), { title, source_branch: 'feature', target_branch: 'master' });
  expect(res.status, res.text).toBe(201);
  await reacted(`merge-request-${res.body.id}`);
  return res.body as { id: number; iid: number; sha: string };
}

async function stateEvent(projectId: number, mr: { id: number; iid: number }, state_event: 'close' | 'reopen', more: Record<string, unknown> = {}) {
  const res = await api.put(`${mrs(projectId)}/${mr.iid}`, { state_event, ...more });
  expect(res.status, res.text).toBe(200);
  await reacted(`merge-request-${mr.id}`);
}

/** The merge command as PUT …/merge issues it, with the source head standing for the merge commit. */
async function merge(mr: { id: number; sha: string }) {
  await run({ ctx: api.runtime.app.commands, metadata: { actor_id: me.id } }, mergeRequests, mr.id, { type: 'MergeMergeRequest', byId: me.id, merge: { mergeCommitSha: mr.sha, squashCommitSha: null } });
  await reacted(`merge-request-${mr.id}`);
}

describe('a merge request notifies the chat integrations as GitLab 12 does', () => {
  it('Slack: opened, an update (nothing), closed, reopened, merged', async () => {
    const hook = `/hooks/slack/${unique('s')}`;
    const p = await projectWith({ slack: { webhook: `${receiver.url}${hook}`, merge_request_channel: '#mrs' } });
    const mr = await open(p.id, 'Fix the build\nwith details');
    // An update (MergeRequestUpdated, handled by no row): the reactor's later receipts cover it, as it reacts in log order.
    expect((await api.put(`${mrs(p.id)}/${mr.iid}`, { title: 'Fix the build', description: 'Now' })).status).toBe(200);
    await stateEvent(p.id, mr, 'close');
    await stateEvent(p.id, mr, 'reopen');
    await merge(mr);

    const rows = await deliveries(p.id);
    expect(rows.map((r) => [r.event_type, r.kind, r.flag, r.status])).toEqual([
      ['MergeRequestOpened', 'slack', 'merge_requests_events', 'pending'],
      ['MergeRequestClosed', 'slack', 'merge_requests_events', 'pending'],
      ['MergeRequestReopened', 'slack', 'merge_requests_events', 'pending'],
      ['MergeRequestMerged', 'slack', 'merge_requests_events', 'pending'],
    ]);
    expect(await send()).toBe(4);
    const bodies = receiver.at(hook).map((r) => {
      expect(r.contentType).toBe('application/x-www-form-urlencoded');
      return formPayload(r.body);
    });
    const who = `${me.name} (${me.username})`;
    const projectLink = `<${p.web}|${p.path_with_namespace}>`;
    const first = `<${p.web}/merge_requests/${mr.iid}|!${mr.iid} *Fix the build*>`;
    // The sender posts due rows concurrently, in no set order.
    expect(bodies.map((b) => b.text).sort()).toEqual(
      [`${who} opened ${first} in ${projectLink}`, `${who} closed ${first} in ${projectLink}`, `${who} opened ${first} in ${projectLink}`, `${who} merged ${first} in ${projectLink}`].sort(),
    );
    for (const body of bodies) expect(body).toEqual({ channel: '#mrs', text: body.text, attachments: [], fallback: null });
    expect((await deliveries(p.id)).map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  it("Mattermost: the slack format with Mattermost's channel and username", async () => {
    const hook = `/hooks/mattermost/${unique('m')}`;
    const p = await projectWith({ mattermost: { webhook: `${receiver.url}${hook}`, channel: 'town-square', username: 'forge' } });
    const mr = await open(p.id, 'Mattermost');
    expect(await send()).toBe(1);
    expect(receiver.at(hook).map((r) => formPayload(r.body))).toEqual([
      {
        channel: 'town-square',
        username: 'forge',
        text: `${me.name} (${me.username}) opened <${p.web}/merge_requests/${mr.iid}|!${mr.iid} *Mattermost*> in <${p.web}|${p.path_with_namespace}>`,
        attachments: [],
        fallback: null,
      },
    ]);
  });

  it('Microsoft Teams: the activity section alone, in Markdown', async () => {
    const hook = `/hooks/teams/${unique('t')}`;
    const p = await projectWith({ 'microsoft-teams': { webhook: `${receiver.url}${hook}` } });
    const mr = await open(p.id, 'Teams');
    await stateEvent(p.id, mr, 'close');
    expect(await send()).toBe(2);
    const link = `[!${mr.iid} *Teams*](${p.web}/merge_requests/${mr.iid})`;
    const projectLink = `[${p.path_with_namespace}](${p.web})`;
    const who = `${me.name} (${me.username})`;
    const card = (state: string) => ({
      sections: [{ activityTitle: `Merge Request ${state} by ${who}`, activitySubtitle: `in ${projectLink}`, activityText: link, activityImage: me.avatar_url }],
      title: p.path_with_namespace,
      summary: `${who} ${state} ${link} in ${projectLink}`,
    });
    const bodies = receiver.at(hook).map((r) => {
      expect(r.contentType).toBe('application/json');
      return JSON.parse(r.body);
    });
    expect(bodies.sort((a, b) => a.summary.localeCompare(b.summary))).toEqual([card('closed'), card('opened')]);
  });

  it('nothing for an integration with merge_requests_events off; a refused update notifies nobody', async () => {
    const off = `/hooks/off/${unique('o')}`;
    const on = `/hooks/on/${unique('n')}`;
    const p = await projectWith({
      slack: { webhook: `${receiver.url}${off}`, merge_requests_events: false },
      mattermost: { webhook: `${receiver.url}${on}` },
    });
    const mr = await open(p.id, 'Quiet');
    await stateEvent(p.id, mr, 'close');
    // Closing it again changes nothing (GitLab's CloseService on a closed merge request): no event, no delivery.
    expect((await api.put(`${mrs(p.id)}/${mr.iid}`, { state_event: 'close' })).status).toBe(200);
    const refused = await api.put(`${mrs(p.id)}/${mr.iid}`, { title: '' });
    expect(refused.status).toBe(400);
    await reacted(`merge-request-${mr.id}`);
    expect(await send()).toBe(2);
    expect(receiver.at(off)).toEqual([]);
    expect(receiver.at(on)).toHaveLength(2);
    expect((await deliveries(p.id)).map((r) => [r.kind, r.event_type])).toEqual([
      ['mattermost', 'MergeRequestOpened'],
      ['mattermost', 'MergeRequestClosed'],
    ]);
  });
});
