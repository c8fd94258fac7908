import { describe, expect, it } from 'vitest';
import { chatRequest, renderChat } from '../../src/domain/integrations/chat-payloads.js';
import { chatWouldNotify, DELIVERY_TRIGGERS, mergeRequestMessage, type MessageFacts } from '../../src/domain/integrations/deliveries.js';
import type { KnownEvent } from '../../src/domain/aggregates.js';

// GitLab 12's ChatMessage::MergeMessage for the merge request events, and what each chat
// format makes of it (spec/models/project_services/chat_message/merge_message_spec.rb's forms).

const web = 'https://git.example/acme/shop';
const avatar = 'https://a.example/jane.png';
const facts: MessageFacts = {
  project: { id: 7, name: 'Acme / Shop', pathWithNamespace: 'acme/shop', webUrl: web },
  user: { name: 'Jane Doe', username: 'jane', avatarUrl: avatar },
};
const of = { id: 41, project_id: 7, iid: 3 };
const SHA = 'a1b2c3d4'.repeat(5);
const link = `[!3 *Fix the build*](${web}/merge_requests/3)`;
const projectLink = `[acme/shop](${web})`;

const opened = DELIVERY_TRIGGERS.MergeRequestOpened.message(
  {
    ...of,
    author_id: 1,
    source_project_id: 7,
    source_branch: 'fix',
    title: 'Fix the build',
    description: 'Long text',
    target_branch: 'main',
    assignee_ids: [],
    milestone_id: null,
    label_ids: [],
    discussion_locked: null,
    squash: false,
    force_remove_source_branch: false,
    allow_collaboration: false,
    version: { version_id: 1, head_commit_sha: SHA, base_commit_sha: SHA, start_commit_sha: SHA, commit_shas: [], files_count: 0 },
  },
  facts,
);
const closed = DELIVERY_TRIGGERS.MergeRequestClosed.message({ ...of, title: 'Fix the build', by_id: 1 }, facts);
const reopened = DELIVERY_TRIGGERS.MergeRequestReopened.message({ ...of, title: 'Fix the build' }, facts);
const merged = DELIVERY_TRIGGERS.MergeRequestMerged.message({ ...of, title: 'Fix the build', by_id: 1, merge_commit_sha: SHA, squash_commit_sha: null }, facts);

describe('ChatMessage::MergeMessage (GitLab 12) for the merge request events', () => {
  it('open: "<name> (<username>) opened [!iid *title*](url) in [project](url)", no attachment, Teams activity "Merge Request opened by"', () => {
    expect(opened).toEqual({
      projectName: 'acme/shop',
      userName: 'jane',
      userAvatar: avatar,
      summary: `Jane Doe (jane) opened ${link} in ${projectLink}`,
      activity: { title: 'Merge Request opened by Jane Doe (jane)', subtitle: `in ${projectLink}`, text: link, image: avatar },
    });
  });

  it.each([
    ['close', closed, 'closed'],
    ['reopen (the state after it: opened)', reopened, 'opened'],
    ['merge', merged, 'merged'],
  ])('%s: the merge request state after the action is the verb', (_, message, state) => {
    expect(message?.summary).toBe(`Jane Doe (jane) ${state} ${link} in ${projectLink}`);
    expect(message?.activity.title).toBe(`Merge Request ${state} by Jane Doe (jane)`);
    expect(message?.details).toBeUndefined();
  });

  it('an update sends nothing: MergeRequestUpdated (and the other merge request events) have no row', () => {
    const types = Object.keys(DELIVERY_TRIGGERS).filter((t) => t.startsWith('MergeRequest'));
    expect(types).toEqual(['MergeRequestOpened', 'MergeRequestClosed', 'MergeRequestReopened', 'MergeRequestMerged']);
    const rows = DELIVERY_TRIGGERS as Partial<Record<KnownEvent['type'], unknown>>;
    expect(rows.MergeRequestUpdated).toBeUndefined();
    for (const type of types) {
      const row = DELIVERY_TRIGGERS[type as 'MergeRequestOpened'];
      expect(row.flag).toBe('merge_requests_events');
      expect(row.projectId({ ...of } as never)).toBe(7);
    }
  });

  it("the title's first line only, without its line break (format_title)", () => {
    const m = mergeRequestMessage({ iid: 9, title: 'First line\r\nSecond line\nThird', state: 'opened' }, facts);
    expect(m.summary).toBe(`Jane Doe (jane) opened [!9 *First line*](${web}/merge_requests/9) in ${projectLink}`);
  });

  it('a user without a name shows the username; an actor that is gone shows nothing', () => {
    const nameless = mergeRequestMessage({ iid: 3, title: 'T', state: 'closed' }, { ...facts, user: { name: '', username: 'bot', avatarUrl: null } });
    expect(nameless.summary).toBe(`bot closed [!3 *T*](${web}/merge_requests/3) in ${projectLink}`);
    expect(nameless.activity).toEqual({ title: 'Merge Request closed by bot', subtitle: `in ${projectLink}`, text: `[!3 *T*](${web}/merge_requests/3)`, image: '' });
    const gone = mergeRequestMessage({ iid: 3, title: 'T', state: 'merged' }, { ...facts, user: null });
    expect(gone.summary).toBe(` merged [!3 *T*](${web}/merge_requests/3) in ${projectLink}`);
    expect(gone.userName).toBe('');
  });

  it('the branch rule does not apply: a merge request message has no ref, so branches_to_be_notified never filters it', () => {
    expect(opened?.ref).toBeUndefined();
    expect(chatWouldNotify(opened!, { branches_to_be_notified: 'protected' }, { defaultBranch: 'main', protectedBranches: [] })).toBe(true);
  });
});

describe('each chat format of a merge request message', () => {
  it('Slack and Mattermost: links as <url|text>, no attachments, fallback null, the merge_request_channel', () => {
    const [payload] = renderChat('slack', opened!, 'merge_requests_events', { merge_request_channel: '#mrs', channel: '#all', username: 'gitlab' });
    expect(payload).toEqual({
      channel: '#mrs',
      username: 'gitlab',
      text: `Jane Doe (jane) opened <${web}/merge_requests/3|!3 *Fix the build*> in <${web}|acme/shop>`,
      attachments: [],
      fallback: null,
    });
    expect(chatRequest('slack', payload!).contentType).toBe('application/x-www-form-urlencoded');
  });

  it('Microsoft Teams: the activity section alone (no Details), title the project, summary in Markdown', () => {
    expect(renderChat('microsoft-teams', merged!, 'merge_requests_events', {})).toEqual([
      {
        sections: [{ activityTitle: 'Merge Request merged by Jane Doe (jane)', activitySubtitle: `in ${projectLink}`, activityText: link, activityImage: avatar }],
        title: 'acme/shop',
        summary: `Jane Doe (jane) merged ${link} in ${projectLink}`,
      },
    ]);
  });

  it('Discord: the summary as the description, the username as the author', () => {
    const [payload] = renderChat('discord', closed!, 'merge_requests_events', {});
    const embed = (payload!.embeds as Record<string, unknown>[])[0]!;
    expect(embed.description).toBe(`Jane Doe (jane) closed ${link} in ${projectLink}\n`);
    expect(embed.author).toEqual({ name: 'jane', url: null, icon_url: avatar });
  });

  it('Hangouts Chat and Unify Circuit', () => {
    expect(renderChat('hangouts-chat', reopened!, 'merge_requests_events', {})).toEqual([
      { text: `Jane Doe (jane) opened <${web}/merge_requests/3|!3 *Fix the build*> in <${web}|acme/shop>` },
    ]);
    expect(renderChat('unify-circuit', reopened!, 'merge_requests_events', {})).toEqual([
      { subject: 'acme/shop', text: `Jane Doe (jane) opened ${link} in ${projectLink}`, markdown: true },
    ]);
  });
});
