import { describe, expect, it } from 'vitest';
import { renderChat } from '../../src/domain/integrations/chat-payloads.js';
import { BLANK_SHA, DELIVERY_TRIGGERS, pushMessage, type MessageFacts } from '../../src/domain/integrations/deliveries.js';

const A = 'a1b2c3d4'.repeat(5);
const B = 'b1b2c3d4'.repeat(5);
const C = 'c1b2c3d4'.repeat(5);
const web = 'https://git.example/acme/shop';
const facts: MessageFacts = {
  project: { id: 7, name: 'Acme / Shop', pathWithNamespace: 'acme/shop', webUrl: web },
  user: { name: 'Jane Doe', username: 'jane', avatarUrl: 'https://a.example/jane.png' },
};

describe('ChatMessage::PushMessage (GitLab 12) for the branch events', () => {
  it('a new branch: "pushed new branch" with the branch link, no attachment', () => {
    const message = DELIVERY_TRIGGERS.BranchCreated.message({ project_id: 7, branch: 'topic', new_sha: B, commits: [B], commit_details: [{ message: 'Add', author_name: 'Jane Doe' }], commit_count: 1 }, facts);
    expect(message).toEqual({
      projectName: 'acme/shop',
      userName: 'Jane Doe',
      userAvatar: 'https://a.example/jane.png',
      summary: `Jane Doe pushed new branch [topic](${web}/commits/topic) to [acme/shop](${web})`,
      activity: {
        title: `Jane Doe pushed new branch [topic](${web}/commits/topic)`,
        subtitle: `in [acme/shop](${web})`,
        text: `[Compare changes](${web}/compare/${BLANK_SHA}...${B})`,
        image: 'https://a.example/jane.png',
      },
      ref: { name: 'topic', tag: false },
    });
  });

  it('a removed branch: "removed branch" with the bare name, no attachment', () => {
    const message = DELIVERY_TRIGGERS.BranchDeleted.message({ project_id: 7, branch: 'topic', old_sha: A }, facts);
    expect(message.summary).toBe(`Jane Doe removed branch topic from [acme/shop](${web})`);
    expect(message.activity).toMatchObject({ title: 'Jane Doe removed branch topic', text: `[Compare changes](${web}/compare/${A}...${BLANK_SHA})` });
    expect(message.details).toBeUndefined();
    expect(message.ref).toEqual({ name: 'topic', tag: false });
  });

  it('a push: "pushed to branch" with the compare link, its commits oldest first as the attachment (#345)', () => {
    const message = DELIVERY_TRIGGERS.BranchUpdated.message(
      {
        project_id: 7, branch: 'main', old_sha: A, new_sha: C, commits: [C, B],
        // author_id (recorded since schema version 4) is internal: the message does not show it.
        commit_details: [{ message: 'Second\n\nwith a body', author_name: 'Bob', author_id: 4 }, { message: 'First', author_name: 'Jane Doe', author_id: null }],
        commit_count: 2,
      },
      facts,
    );
    expect(message.summary).toBe(`Jane Doe pushed to branch [main](${web}/commits/main) of [acme/shop](${web}) ([Compare changes](${web}/compare/${A}...${C}))`);
    expect(message.activity.title).toBe(`Jane Doe pushed to branch [main](${web}/commits/main)`);
    expect(message.details).toEqual({
      text: `[b1b2c3d4](${web}/commit/${B}): First - Jane Doe\n\n[c1b2c3d4](${web}/commit/${C}): Second\n\nwith a body - Bob`,
      color: '#345',
    });
    // Slack's body: the links in Slack's form, the attachment with its color.
    expect(renderChat('slack', message, 'push_events', {})).toEqual([
      {
        text: `Jane Doe pushed to branch <${web}/commits/main|main> of <${web}|acme/shop> (<${web}/compare/${A}...${C}|Compare changes>)`,
        attachments: [{ text: `<${web}/commit/${B}|b1b2c3d4>: First - Jane Doe\n\n<${web}/commit/${C}|c1b2c3d4>: Second\n\nwith a body - Bob`, color: '#345' }],
        fallback: null,
      },
    ]);
  });

  it('lists the latest 20 commits of a longer push (Gitlab::DataBuilder::Push)', () => {
    const shas = Array.from({ length: 25 }, (_, i) => (i + 1).toString(16).padStart(40, 'f')); // newest first
    const message = pushMessage({ ref: 'main', before: A, after: shas[0]!, commits: shas, details: shas.map((_, i) => ({ message: `m${i}`, author_name: 'J' })) }, facts);
    const lines = message.details!.text.split('\n\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toContain(': m19 - J');
    expect(lines[19]).toContain(': m0 - J');
  });

  it('without an actor left, names nobody (the push data has no user then)', () => {
    const message = pushMessage({ ref: 'main', before: A, after: B, commits: [], details: [] }, { ...facts, user: null });
    expect(message.summary.startsWith(' pushed to branch')).toBe(true);
    expect(message.userAvatar).toBeNull();
  });
});
