import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { BLANK_SHA } from '../../src/domain/integrations/deliveries.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// Pushes through the API notify the project's chat integrations: the production delivery
// table (DELIVERY_TRIGGERS' branch rows) and the runtime's own `integration-deliveries`
// reactor record the requests; the sender, driven here with its own clock, posts them to a
// local receiver.

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}x${process.pid}`;

let api: TestServer;
const receiver = new WebhookReceiver();
let me: { id: number; name: string; avatar_url: string };
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
const repo = (projectId: number, rest: string) => `/projects/${projectId}/repository${rest}`;
const formPayload = (body: string) => JSON.parse(new URLSearchParams(body).get('payload')!);
const deliveries = (projectId: number) => api.handle.db.selectFrom('integration_deliveries').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

/** Waits until the production reactor has handled the latest event of the project's repository (its refs' streams). */
async function reacted(projectId: number) {
  const last = await api.handle.db
    .selectFrom('events')
    .select('event_id')
    .where('stream_id', 'like', `repository-${projectId}:%`)
    .orderBy('global_position', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  await eventually(() =>
    api.handle.db.selectFrom('reactor_receipts').select('event_id').where('reactor', '=', 'integration-deliveries').where('event_id', '=', last.event_id).executeTakeFirst(),
  );
}

async function commit(projectId: number, body: Record<string, unknown>) {
  const res = await api.post(repo(projectId, '/commits'), { actions: [{ action: 'create', file_path: unique('f'), content: 'x' }], ...body });
  expect(res.status, res.text).toBe(201);
  await reacted(projectId);
  return res.body as { id: string; short_id: string };
}

async function projectWith(integrations: Record<string, Record<string, unknown>>) {
  const project = await createProject(api);
  for (const [slug, settings] of Object.entries(integrations)) {
    const saved = await api.put(`/projects/${project.id}/services/${slug}`, settings);
    expect(saved.status, saved.text).toBe(200);
  }
  const web = `${api.url}/${project.path_with_namespace}`;
  return { ...project, web, link: `<${web}|${project.path_with_namespace}>` };
}

describe('a push notifies the chat integrations as GitLab 12 does', () => {
  it('Slack: a new branch, a push with its commit, a removed branch', async () => {
    const hook = `/hooks/slack/${unique('s')}`;
    const p = await projectWith({ slack: { webhook: `${receiver.url}${hook}`, branches_to_be_notified: 'all' } });

    // Sent after each push: the sender posts due rows concurrently, in no set order.
    const first = await commit(p.id, { branch: 'main', commit_message: 'Start' });
    expect(await send()).toBe(1);
    const second = await commit(p.id, { branch: 'main', commit_message: 'Fix the build\n\nFor good.' });
    expect(await send()).toBe(1);
    expect((await api.del(repo(p.id, '/branches/main'))).status).toBe(400); // the default branch stays (BranchCheck)
    expect((await api.post(repo(p.id, '/branches'), { branch: 'topic', ref: 'main' })).status).toBe(201);
    await reacted(p.id);
    expect(await send()).toBe(1);
    expect((await api.del(repo(p.id, '/branches/topic'))).status).toBe(204);
    await reacted(p.id);

    const rows = await deliveries(p.id);
    expect(rows.map((r) => [r.event_type, r.kind, r.flag, r.status])).toEqual([
      ['BranchCreated', 'slack', 'push_events', 'delivered'],
      ['BranchUpdated', 'slack', 'push_events', 'delivered'],
      ['BranchCreated', 'slack', 'push_events', 'delivered'],
      ['BranchDeleted', 'slack', 'push_events', 'pending'],
    ]);
    expect(await send()).toBe(1);
    const bodies = receiver.at(hook).map((r) => {
      expect(r.contentType).toBe('application/x-www-form-urlencoded');
      return formPayload(r.body);
    });
    const commits = `<${p.web}/commits/main|main>`;
    expect(bodies).toEqual([
      { text: `${me.name} pushed new branch ${commits} to ${p.link}`, attachments: [], fallback: null },
      {
        text: `${me.name} pushed to branch ${commits} of ${p.link} (<${p.web}/compare/${first.id}...${second.id}|Compare changes>)`,
        attachments: [{ text: `<${p.web}/commit/${second.id}|${second.short_id}>: Fix the build\n\nFor good. - ${me.name}`, color: '#345' }],
        fallback: null,
      },
      { text: `${me.name} pushed new branch <${p.web}/commits/topic|topic> to ${p.link}`, attachments: [], fallback: null },
      { text: `${me.name} removed branch topic from ${p.link}`, attachments: [], fallback: null },
    ]);
    expect((await deliveries(p.id)).map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });

  it("Microsoft Teams: the activity section and the commits as the Details fact, in Markdown", async () => {
    const hook = `/hooks/teams/${unique('t')}`;
    const p = await projectWith({ 'microsoft-teams': { webhook: `${receiver.url}${hook}`, branches_to_be_notified: 'all' } });
    const first = await commit(p.id, { branch: 'main', commit_message: 'Start' });
    await send();
    const second = await commit(p.id, { branch: 'main', commit_message: 'More' });
    await send();
    const [created, pushed] = receiver.at(hook).map((r) => JSON.parse(r.body));
    const projectLink = `[${p.path_with_namespace}](${p.web})`;
    const mainLink = `[main](${p.web}/commits/main)`;
    expect(created).toEqual({
      sections: [
        {
          activityTitle: `${me.name} pushed new branch ${mainLink}`,
          activitySubtitle: `in ${projectLink}`,
          activityText: `[Compare changes](${p.web}/compare/${BLANK_SHA}...${first.id})`,
          activityImage: me.avatar_url,
        },
      ],
      title: p.path_with_namespace,
      summary: `${me.name} pushed new branch ${mainLink} to ${projectLink}`,
    });
    const compare = `[Compare changes](${p.web}/compare/${first.id}...${second.id})`;
    expect(pushed).toEqual({
      sections: [
        { activityTitle: `${me.name} pushed to branch ${mainLink}`, activitySubtitle: `in ${projectLink}`, activityText: compare, activityImage: me.avatar_url },
        { title: 'Details', facts: [{ name: 'Attachments', value: `[${second.short_id}](${p.web}/commit/${second.id}): More - ${me.name}` }] },
      ],
      title: p.path_with_namespace,
      summary: `${me.name} pushed to branch ${mainLink} of ${projectLink} (${compare})`,
    });
  });

  it('nothing for an integration with push_events off, and only the default branch under branches_to_be_notified=default', async () => {
    const off = `/hooks/off/${unique('o')}`;
    const def = `/hooks/default/${unique('d')}`;
    const p = await projectWith({
      slack: { webhook: `${receiver.url}${off}`, push_events: false },
      mattermost: { webhook: `${receiver.url}${def}`, branches_to_be_notified: 'default' },
    });
    await commit(p.id, { branch: 'main', commit_message: 'Start' }); // the first branch becomes the default
    await commit(p.id, { branch: 'side', start_branch: 'main', commit_message: 'Aside' });
    await commit(p.id, { branch: 'main', commit_message: 'On main' });
    await send();
    expect(receiver.at(off)).toEqual([]);
    expect(receiver.at(def).map((r) => formPayload(r.body).text.split(' <')[0]).sort()).toEqual([`${me.name} pushed new branch`, `${me.name} pushed to branch`]);
    expect((await deliveries(p.id)).map((r) => [r.kind, r.event_type])).toEqual([
      ['mattermost', 'BranchCreated'],
      ['mattermost', 'BranchUpdated'],
    ]);
  });

  it('a refused push notifies nobody', async () => {
    const hook = `/hooks/refused/${unique('r')}`;
    const p = await projectWith({ slack: { webhook: `${receiver.url}${hook}` } });
    await commit(p.id, { branch: 'main', commit_message: 'Start' });
    const refused = await api.post(repo(p.id, '/commits'), { branch: 'main', commit_message: 'x', actions: [{ action: 'delete', file_path: 'missing.txt' }] });
    expect(refused.status).toBe(400);
    await reacted(p.id);
    expect((await deliveries(p.id)).map((r) => r.event_type)).toEqual(['BranchCreated']);
  });
});
