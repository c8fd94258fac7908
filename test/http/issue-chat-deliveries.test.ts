import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { renderChat } from '../../src/domain/integrations/chat-payloads.js';
import { DELIVERY_TRIGGERS, noteMessage, type MessageFacts } from '../../src/domain/integrations/deliveries.js';
import { issueMessage } from '../../src/domain/integrations/issue-message.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// GitLab 12's ChatMessage::IssueMessage (spec/models/project_services/chat_message/issue_message_spec.rb's
// forms) for issues_events / confidential_issues_events, pure and through a Slack integration to a local receiver.

const web = 'https://git.example/acme/shop';
const avatar = 'https://a.example/jane.png';
const facts: MessageFacts = {
  project: { id: 7, name: 'Acme / Shop', pathWithNamespace: 'acme/shop', webUrl: web },
  user: { name: 'Jane Doe', username: 'jane', avatarUrl: avatar },
};
const issueLink = `[#4 Issue title](${web}/-/issues/4)`;
const projectLink = `[acme/shop](${web})`;

describe('ChatMessage::IssueMessage', () => {
  it('open: "[<project>] Issue <link> opened by <user>", the description as the attachment (#C95823)', () => {
    const message = issueMessage({ iid: 4, title: 'Issue title', description: 'issue [description](https://x.example/d)', action: 'open' }, facts);
    expect(message).toEqual({
      projectName: 'acme/shop',
      userName: 'jane',
      userAvatar: avatar,
      summary: `[${projectLink}] Issue ${issueLink} opened by Jane Doe (jane)`,
      details: { title: '#4 Issue title', titleUrl: `${web}/-/issues/4`, text: 'issue [description](https://x.example/d)', color: '#C95823' },
      activity: { title: 'Issue opened by Jane Doe (jane)', subtitle: `in ${projectLink}`, text: issueLink, image: avatar },
    });
    const [slack] = renderChat('slack', message, 'issues_events', { issue_channel: 'issues' });
    expect(slack).toEqual({
      channel: 'issues',
      text: `[<${web}|acme/shop>] Issue <${web}/-/issues/4|#4 Issue title> opened by Jane Doe (jane)`,
      attachments: [{ title: '#4 Issue title', title_link: `${web}/-/issues/4`, text: 'issue <https://x.example/d|description>', color: '#C95823' }],
      fallback: null,
    });
  });

  it('close and reopen: the state after the action, no attachment', () => {
    const closed = issueMessage({ iid: 4, title: 'Issue title', description: null, action: 'close' }, facts);
    expect(closed.summary).toBe(`[${projectLink}] Issue ${issueLink} closed by Jane Doe (jane)`);
    expect(closed.details).toBeUndefined();
    expect(issueMessage({ iid: 4, title: 'Issue title', description: null, action: 'reopen' }, facts).activity.title).toBe('Issue opened by Jane Doe (jane)');
  });

  it('a confidential issue goes to confidential_issue_channel, else issue_channel', () => {
    const message = issueMessage({ iid: 4, title: 'Issue title', description: null, action: 'close' }, facts);
    expect(renderChat('slack', message, 'confidential_issues_events', { issue_channel: 'issues', confidential_issue_channel: 'secret' })[0]!.channel).toBe('secret');
    expect(renderChat('slack', message, 'confidential_issues_events', { issue_channel: 'issues' })[0]!.channel).toBe('issues');
  });
});

describe('ChatMessage::NoteMessage on issues and snippets', () => {
  it('"commented on issue #<iid>" / "snippet $<id>"; a note on a confidential issue asks for confidential_note_events', () => {
    const note = { id: 9, body: 'Hi', noteable_type: 'Issue', noteable_id: 40, noteable_iid: 4, commit_id: null, noteable_title: 'Issue title' };
    expect(noteMessage(note, facts)?.summary).toBe(`Jane Doe (jane) [commented on issue #4](${web}/-/issues/4#note_9) in ${projectLink}: *Issue title*`);
    expect(noteMessage({ ...note, noteable_type: 'Snippet', noteable_id: 12, noteable_iid: null }, facts)?.summary).toBe(
      `Jane Doe (jane) [commented on snippet $12](${web}/-/snippets/12#note_9) in ${projectLink}: *Issue title*`,
    );
    const confidential = DELIVERY_TRIGGERS.NoteAdded.confidential;
    expect(confidential.flag).toBe('confidential_note_events');
    expect(confidential.issueId({ noteable_type: 'Issue', noteable_id: 40 } as never)).toBe(40);
    expect(confidential.issueId({ noteable_type: 'MergeRequest', noteable_id: 41 } as never)).toBeNull();
  });
});

describe('through a Slack integration', () => {
  let api: TestServer;
  const receiver = new WebhookReceiver();
  const clock = new Date(Date.now() + 3_600_000);
  const SENDER = orderedSender(clock);

  beforeAll(async () => {
    api = await startTestServer({}, { deliveries: false });
    await settled(api);
    await receiver.start();
    expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
  });
  afterAll(async () => {
    await receiver.close();
    await api.close();
  });

  async function received(path: string, count: number) {
    const got = await receiver.awaitRequests(path, count, () => sendDueDeliveries(api.handle.db, SENDER));
    expect(got.length, `requests to ${path}`).toBe(count);
    return got.map((r) => JSON.parse(new URLSearchParams(r.body).get('payload')!));
  }

  it('notifies issues_events of open and close (not update), confidential issues only with confidential_issues_events', async () => {
    const me = (await api.get('/user')).body;
    const project = await createProject(api);
    const pub = `/slack/public-${project.id}`;
    const secret = `/slack/secret-${project.id}`;
    const other = await createProject(api);
    expect((await api.put(`/projects/${project.id}/services/slack`, { webhook: `${receiver.url}${pub}`, issues_events: true, confidential_issues_events: false })).status).toBe(200);
    expect((await api.put(`/projects/${other.id}/services/slack`, { webhook: `${receiver.url}${secret}`, issues_events: false, confidential_issues_events: true })).status).toBe(200);
    const issue = await api.post(`/projects/${project.id}/issues`, { title: 'Visible', description: 'Details' });
    expect(issue.status, issue.text).toBe(201);
    expect((await api.put(`/projects/${project.id}/issues/${issue.body.iid}`, { title: 'Visible still' })).status).toBe(200);
    expect((await api.put(`/projects/${project.id}/issues/${issue.body.iid}`, { state_event: 'close' })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/issues`, { title: 'Hidden', confidential: true })).status).toBe(201);
    expect((await api.post(`/projects/${other.id}/issues`, { title: 'Open one' })).status).toBe(201);
    expect((await api.post(`/projects/${other.id}/issues`, { title: 'Secret one', confidential: true })).status).toBe(201);

    const webUrl = `${api.url}/${project.path_with_namespace}`;
    const user = `${me.name} (${me.username})`;
    // Recorded together, they may be sent side by side: told apart by what they say.
    const both = await received(pub, 2);
    const [opened, closed] = [both.find((m) => m.text.includes('> opened by')), both.find((m) => m.text.includes('> closed by'))];
    expect(opened).toEqual({
      text: `[<${webUrl}|${project.path_with_namespace}>] Issue <${webUrl}/-/issues/${issue.body.iid}|#${issue.body.iid} Visible> opened by ${user}`,
      attachments: [{ title: `#${issue.body.iid} Visible`, title_link: `${webUrl}/-/issues/${issue.body.iid}`, text: 'Details', color: '#C95823' }],
      fallback: null,
    });
    expect(closed.text).toContain(`|#${issue.body.iid} Visible still> closed by ${user}`);
    expect(closed.attachments).toEqual([]);
    const [confidential] = await received(secret, 1);
    expect(confidential.text).toContain('Secret one> opened by');
  });

  it('tells of a confidential issue as confidential though it was deleted before the reactor read it', async () => {
    const project = await createProject(api);
    const path = `/slack/both-${project.id}`;
    const settings = { webhook: `${receiver.url}${path}`, issues_events: true, confidential_issues_events: true, issue_channel: 'issues', confidential_issue_channel: 'secret' };
    expect((await api.put(`/projects/${project.id}/services/slack`, settings)).status).toBe(200);
    const issue = await api.post(`/projects/${project.id}/issues`, { title: 'Quiet', confidential: true });
    expect(issue.status, issue.text).toBe(201);
    expect((await received(path, 1))[0]).toMatchObject({ channel: 'secret', text: expect.stringContaining('Quiet> opened by') });
    const worker = api.runtime.worker!;
    await worker.stop();
    try {
      expect((await api.put(`/projects/${project.id}/issues/${issue.body.iid}`, { state_event: 'close' })).status).toBe(200);
      expect((await api.del(`/projects/${project.id}/issues/${issue.body.iid}`)).status).toBe(204);
    } finally {
      worker.start();
    }
    const [, closed] = await received(path, 2);
    expect(closed).toMatchObject({ channel: 'secret', text: expect.stringContaining('Quiet> closed by') });
  });
});
