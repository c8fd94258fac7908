import { describe, expect, it } from 'vitest';
import { KINDS } from '../../src/domain/integrations/catalogue.js';
import { chatChannels, chatRequest, renderChat, slackLinks } from '../../src/domain/integrations/chat-payloads.js';
import { DELIVERY_TRIGGERS, chatWouldNotify, isProtectedBranch, type ChatMessage, type DeliveryTriggers } from '../../src/domain/integrations/deliveries.js';

const message = (more: Partial<ChatMessage> = {}): ChatMessage => ({
  projectName: 'g/p',
  userName: 'Jane',
  userAvatar: 'https://a/jane.png',
  summary: 'Jane pushed to branch [main](http://x/g/p/commits/main) of [g/p](http://x/g/p)',
  activity: { title: 'Jane pushed to branch', subtitle: 'to: [g/p](http://x/g/p)', text: '[Compare changes](http://x/c)', image: 'https://a/jane.png' },
  ...more,
});

describe('the delivery table', () => {
  it('has the pushes, merge requests, issues and notes as its production rows (the event types of today GitLab 12 runs services for)', () => {
    expect(Object.entries(DELIVERY_TRIGGERS).map(([type, t]) => [type, t.flag, ('confidential' in t ? t.confidential?.flag : undefined) ?? null])).toEqual([
      ['BranchCreated', 'push_events', null],
      ['BranchUpdated', 'push_events', null],
      ['BranchDeleted', 'push_events', null],
      ['MergeRequestOpened', 'merge_requests_events', null],
      ['MergeRequestClosed', 'merge_requests_events', null],
      ['MergeRequestReopened', 'merge_requests_events', null],
      ['MergeRequestMerged', 'merge_requests_events', null],
      // A confidential issue's events, and notes on one, go by the confidential flag instead.
      ['IssueOpened', 'issues_events', 'confidential_issues_events'],
      ['IssueClosed', 'issues_events', 'confidential_issues_events'],
      ['IssueReopened', 'issues_events', 'confidential_issues_events'],
      ['NoteAdded', 'note_events', 'confidential_note_events'],
    ]);
  });

  it('takes only event types the aggregates define, each with its own data', () => {
    const ok: DeliveryTriggers = { ProjectCreated: { flag: 'push_events', projectId: (data) => data.id, message: () => null } };
    // @ts-expect-error: no aggregate defines this type
    const misspelt: DeliveryTriggers = { ProjectPushed: { flag: 'push_events', projectId: () => 1, message: () => null } };
    // @ts-expect-error: not a flag a service subscribes with
    const badFlag: DeliveryTriggers = { ProjectCreated: { flag: 'job_events', projectId: (data) => data.id, message: () => null } };
    expect([ok, misspelt, badFlag]).toHaveLength(3);
  });

  it('the kinds that send over HTTP are the chat webhooks', () => {
    expect(KINDS.filter((k) => k.chat).map((k) => [k.slug, k.chat])).toEqual([
      ['discord', 'discord'],
      ['hangouts-chat', 'hangouts-chat'],
      ['mattermost', 'slack'],
      ['microsoft-teams', 'microsoft-teams'],
      ['slack', 'slack'],
      ['unify-circuit', 'unify-circuit'],
    ]);
    for (const kind of KINDS.filter((k) => k.chat)) expect(kind.fields.map((f) => f.name)).toContain('webhook');
  });
});

describe('chatWouldNotify (ChatNotificationService#notify_for_ref? and #notify_for_pipeline?)', () => {
  const facts = { defaultBranch: 'main', protectedBranches: ['stable', 'release/*'] };
  const on = (branch: string, tag = false) => message({ ref: { name: branch, tag } });

  it.each([
    ['all', 'feature', true],
    ['default', 'main', true],
    ['default', 'feature', false],
    ['protected', 'stable', true],
    ['protected', 'release/1.0', true],
    ['protected', 'main', false],
    ['default_and_protected', 'main', true],
    ['default_and_protected', 'release/2', true],
    ['default_and_protected', 'feature', false],
    ['nonsense', 'main', false],
  ])('branches_to_be_notified %s, branch %s → %s', (choice, branch, notified) => {
    expect(chatWouldNotify(on(branch), { branches_to_be_notified: choice }, facts)).toBe(notified);
  });

  it('a tag is always notified; a message without a ref is not filtered; no setting means all', () => {
    expect(chatWouldNotify(on('v1', true), { branches_to_be_notified: 'default' }, facts)).toBe(true);
    expect(chatWouldNotify(message(), { branches_to_be_notified: 'default' }, facts)).toBe(true);
    expect(chatWouldNotify(on('feature'), {}, facts)).toBe(true);
  });

  it('pipelines: failed always, success unless only broken ones, other statuses never', () => {
    const pipeline = (status: string) => message({ ref: { name: 'main', tag: false }, pipelineStatus: status });
    expect(chatWouldNotify(pipeline('failed'), { notify_only_broken_pipelines: true }, facts)).toBe(true);
    expect(chatWouldNotify(pipeline('success'), { notify_only_broken_pipelines: true }, facts)).toBe(false);
    expect(chatWouldNotify(pipeline('success'), { notify_only_broken_pipelines: false }, facts)).toBe(true);
    expect(chatWouldNotify(pipeline('running'), { notify_only_broken_pipelines: false }, facts)).toBe(false);
    // The branch rule first.
    expect(chatWouldNotify(message({ ref: { name: 'feature', tag: false }, pipelineStatus: 'failed' }), { branches_to_be_notified: 'default' }, facts)).toBe(false);
  });

  it('protected branch wildcards match as GitLab\'s do, special characters literally', () => {
    expect(isProtectedBranch('release/1.0', ['release/*'])).toBe(true);
    expect(isProtectedBranch('release', ['release/*'])).toBe(false);
    expect(isProtectedBranch('v1x0', ['v1.0'])).toBe(false);
    expect(isProtectedBranch('a+b-c', ['a+b*'])).toBe(true);
  });
});

describe('renderers', () => {
  it('slackLinks turns Markdown links into Slack links', () => {
    expect(slackLinks('see [the MR](http://x/1) and [b](http://y)')).toBe('see <http://x/1|the MR> and <http://y|b>');
  });

  it('channels: the event\'s, confidential ones falling back to the open one, then `channel`, split on commas', () => {
    expect(chatChannels('push_events', {})).toEqual([null]);
    expect(chatChannels('push_events', { channel: 'general' })).toEqual(['general']);
    expect(chatChannels('push_events', { channel: 'general', push_channel: 'a, b' })).toEqual(['a', 'b']);
    expect(chatChannels('confidential_issues_events', { issue_channel: 'issues' })).toEqual(['issues']);
    expect(chatChannels('confidential_issues_events', { issue_channel: 'issues', confidential_issue_channel: 'secret' })).toEqual(['secret']);
    expect(chatChannels('note_events', { note_channel: ' , ' , channel: 'x' })).toEqual([null]);
  });

  it('an attachment with a title: Slack keeps title and title_link, Hangouts Chat writes <url|title>', () => {
    const m = message({ details: { title: 'Fix it', titleUrl: 'http://x/i/1', text: 'see [here](http://x/h)' } });
    expect(renderChat('slack', m, 'issues_events', { username: 'bot' })).toEqual([
      {
        username: 'bot',
        text: 'Jane pushed to branch <http://x/g/p/commits/main|main> of <http://x/g/p|g/p>',
        attachments: [{ title: 'Fix it', title_link: 'http://x/i/1', text: 'see <http://x/h|here>', color: '#345' }],
        fallback: null,
      },
    ]);
    expect(renderChat('hangouts-chat', m, 'issues_events', {})).toEqual([
      { text: 'Jane pushed to branch <http://x/g/p/commits/main|main> of <http://x/g/p|g/p>\n<http://x/i/1|Fix it>\nsee <http://x/h|here>' },
    ]);
  });

  it('without an attachment: Teams has the activity section only, Hangouts Chat the summary only', () => {
    expect(renderChat('microsoft-teams', message(), 'push_events', {})).toEqual([
      {
        sections: [{ activityTitle: 'Jane pushed to branch', activitySubtitle: 'to: [g/p](http://x/g/p)', activityText: '[Compare changes](http://x/c)', activityImage: 'https://a/jane.png' }],
        title: 'g/p',
        summary: message().summary,
      },
    ]);
    expect(renderChat('hangouts-chat', message(), 'push_events', {})).toEqual([{ text: 'Jane pushed to branch <http://x/g/p/commits/main|main> of <http://x/g/p|g/p>' }]);
  });

  it('Discord rewrites commit lines as DiscordService::ATTACHMENT_REGEX does', () => {
    const m = message({ details: { text: '[abc](http://x/abc): Fix\n - Jane\n\n[def](http://x/def): More\n - Joe' } });
    const [payload] = renderChat('discord', m, 'push_events', {}) as [{ embeds: [{ description: string }] }];
    expect(payload.embeds[0].description).toBe(`${m.summary}\n[abc](http://x/abc) Fix - Jane\n[def](http://x/def) More - Joe\n`);
  });

  it('requests: Slack-format form-encoded as payload=<json>, the others JSON', () => {
    expect(chatRequest('slack', { text: 'a&b' })).toEqual({ contentType: 'application/x-www-form-urlencoded', body: 'payload=%7B%22text%22%3A%22a%26b%22%7D' });
    expect(chatRequest('unify-circuit', { subject: 's', text: 't', markdown: true })).toEqual({ contentType: 'application/json', body: '{"subject":"s","text":"t","markdown":true}' });
  });
});
