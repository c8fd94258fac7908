import { describe, expect, it } from 'vitest';
import { defaultFlags, hookDecider, type HookCommand, type HookEvent, type HookSnapshot } from '../../src/domain/hooks/decider.js';
import { absoluteImageUrls, gitlabEventHeader, gitXmlschema, sidekiqTime, xmlschema } from '../../src/domain/hooks/payloads.js';
import { issueAsOf } from '../../src/domain/hooks/issuables.js';
import { membershipOf, projectOf } from '../../src/domain/hooks/payloads-system.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(hookDecider);

const ID = 7;
const snapshot = (over: Partial<HookSnapshot> = {}): HookSnapshot => ({
  id: ID,
  kind: 'project',
  project_id: 3,
  group_id: null,
  url: 'https://a.example.com',
  flags: defaultFlags('project'),
  push_events_branch_filter: null,
  enable_ssl_verification: true,
  token: null,
  ...over,
});
const created = (over: Partial<HookSnapshot> = {}): HookEvent => ({ type: 'HookCreated', data: snapshot(over) });
const create = (over: Partial<Extract<HookCommand, { type: 'CreateHook' }>> = {}): HookCommand => ({
  type: 'CreateHook',
  kind: 'project',
  projectId: 3,
  groupId: null,
  url: 'https://a.example.com',
  flags: {},
  urlErrors: [],
  ...over,
});

describe('the hook decider', () => {
  it('creates a hook with its kind’s defaults (a system hook: repository updates, no pushes)', () => {
    on(ID).given().when(create()).then([created()]);
    on(ID)
      .given()
      .when(create({ kind: 'system', projectId: null, flags: { tag_push_events: true } }))
      .then([created({ kind: 'system', project_id: null, flags: { ...defaultFlags('system'), tag_push_events: true } })]);
    expect(defaultFlags('system')).toMatchObject({ push_events: false, repository_update_events: true, confidential_note_events: null });
  });

  it("refuses what WebHook's validations refuse, every field at once", () => {
    on(ID).given().when(create({ url: '' })).then(rejected('invalid', { fields: { url: ["can't be blank"] } }));
    on(ID)
      .given()
      .when(create({ urlErrors: ['is blocked: Requests to localhost are not allowed'], tokenInvalid: true, token: 'f', pushEventsBranchFilter: 'a..b' }))
      .then(
        rejected('invalid', {
          fields: { url: ['is blocked: Requests to localhost are not allowed'], token: ['is invalid'], push_events_branch_filter: ['is not a valid branch name'] },
        }),
      );
    on(ID).given().when(create({ pushEventsBranchFilter: 'release/*' })).then([created({ push_events_branch_filter: 'release/*' })]);
  });

  it('updates with what is sent; the same again is no event; a missing hook is not found', () => {
    on(ID)
      .given(created())
      .when({ type: 'UpdateHook', url: 'https://b.example.com', flags: { merge_requests_events: true }, token: 'print', urlErrors: [] })
      .then([{ type: 'HookUpdated', data: snapshot({ url: 'https://b.example.com', flags: { ...defaultFlags('project'), merge_requests_events: true }, token: 'print' }) }]);
    on(ID).given(created()).when({ type: 'UpdateHook', url: 'https://a.example.com', flags: {}, urlErrors: [] }).then([]);
    on(ID).given().when({ type: 'DeleteHook' }).then(rejected('not_found'));
    on(ID).given(created()).when({ type: 'DeleteHook' }).then([{ type: 'HookDeleted', data: { id: ID, kind: 'project', project_id: 3, group_id: null } }]);
  });
});

describe('payload formats', () => {
  it("X-Gitlab-Event is the hook name titleized, a system hook's always System Hook", () => {
    expect(gitlabEventHeader('push_hooks', false)).toBe('Push Hook');
    expect(gitlabEventHeader('tag_push_hooks', false)).toBe('Tag Push Hook');
    expect(gitlabEventHeader('merge_request_hooks', false)).toBe('Merge Request Hook');
    expect(gitlabEventHeader('confidential_issue_hooks', false)).toBe('Confidential Issue Hook');
    expect(gitlabEventHeader('push_hooks', true)).toBe('System Hook');
  });

  it("writes Ruby's times", () => {
    expect(xmlschema(new Date('2012-07-21T07:30:54.123Z'))).toBe('2012-07-21T07:30:54Z');
    expect(sidekiqTime(new Date('2013-12-03T17:23:34.000Z'))).toBe('2013-12-03 17:23:34 UTC');
    expect(gitXmlschema(1323692851, 120)).toBe('2011-12-12T14:27:31+02:00');
    expect(gitXmlschema(1323692851, -330)).toBe('2011-12-12T06:57:31-05:30');
  });

  it('folds a subject from its history', () => {
    const at = (s: number) => new Date(s * 1000);
    const project = projectOf([
      { type: 'ProjectCreated', data: { id: 1, name: 'A', path: 'a', path_with_namespace: 'g/a', visibility: 'private', namespace_id: 2 }, occurredAt: at(1) },
      { type: 'ProjectUpdated', data: { id: 1, changes: { path: 'b' }, path_with_namespace: 'g/b' }, occurredAt: at(2) },
    ]);
    expect(project).toEqual({ id: 1, name: 'A', path: 'b', pathWithNamespace: 'g/b', visibility: 'private', namespaceId: 2, createdAt: at(1), updatedAt: at(2) });
    const membership = membershipOf(
      [
        { type: 'MemberAdded', data: { user_id: 5, access_level: 30 }, occurredAt: at(1) },
        { type: 'MemberAdded', data: { user_id: 6, access_level: 10 }, occurredAt: at(2) },
        { type: 'MemberUpdated', data: { user_id: 5, access_level: 40 }, occurredAt: at(3) },
      ],
      5,
    );
    expect(membership).toEqual({ accessLevel: 40, createdAt: at(1), updatedAt: at(3) });
  });

  it('folds an issue from its stream with the times its projection keeps, and nothing once deleted', () => {
    const at = (s: number) => new Date(s * 1000);
    const ofIssue = { id: 4, project_id: 1, iid: 2 };
    const opened = {
      type: 'IssueOpened',
      data: { ...ofIssue, author_id: 9, title: 'T', description: null, assignee_ids: [9], milestone_id: null, label_ids: [3], due_date: null, confidential: true, discussion_locked: null, weight: null, created_at: null, moved_from_id: null },
      occurredAt: at(1),
    };
    const updated = { type: 'IssueUpdated', data: { ...ofIssue, changes: { title: 'U', discussion_locked: true }, previous: { title: 'T' }, updated_at: null }, occurredAt: at(2) };
    const subscribed = { type: 'IssueSubscribed', data: { ...ofIssue, user_id: 5 }, occurredAt: at(3) };
    const closed = { type: 'IssueClosed', data: { ...ofIssue, title: 'U', by_id: 9 }, occurredAt: at(4) };
    expect(issueAsOf(4, [opened, updated, subscribed, closed])).toMatchObject({
      id: 4,
      issue: { title: 'U', state: 'closed', confidential: true, labelIds: [3], assigneeIds: [9] },
      discussionLocked: true,
      closedAt: at(4),
      createdAt: at(1),
      updatedAt: at(4),
    });
    expect(issueAsOf(4, [opened, updated, subscribed])).toMatchObject({ issue: { state: 'opened' }, closedAt: null, updatedAt: at(2) });
    expect(issueAsOf(4, [opened, { type: 'IssueDeleted', data: ofIssue, occurredAt: at(5) }])).toBeUndefined();
    expect(issueAsOf(4, [])).toBeUndefined();
  });
});

describe('absoluteImageUrls (BaseBuilder.absolute_image_urls, its spec table)', () => {
  const base = 'https://gitlab.example.com';
  it.each([
    ['relative image URL', '![an image](foo.png)', `![an image](${base}/foo.png)`],
    ['HTTP URL', '![an image](http://example.com/foo.png)', '![an image](http://example.com/foo.png)'],
    ['HTTPS URL', '![an image](https://example.com/foo.png)', '![an image](https://example.com/foo.png)'],
    ['protocol-relative URL', '![an image](//example.com/foo.png)', '![an image](//example.com/foo.png)'],
    ['URL reference by title', '![foo]\n\n[foo]: foo.png', '![foo]\n\n[foo]: foo.png'],
    ['URL reference by label', '![][foo]\n\n[foo]: foo.png', '![][foo]\n\n[foo]: foo.png'],
    ['in Markdown inline code block', '`![an image](foo.png)`', `\`![an image](${base}/foo.png)\``],
    ['in HTML tag on the same line', '<p>![an image](foo.png)</p>', `<p>![an image](${base}/foo.png)</p>`],
    ['in Markdown multi-line code block', '```\n![an image](foo.png)\n```', '```\n![an image](foo.png)\n```'],
    ['in HTML tag on different lines', '<p>\n![an image](foo.png)\n</p>', '<p>\n![an image](foo.png)\n</p>'],
    ['an upload, two images, a line after a code block', '![a](/uploads/x/a.png) ![b](b.png)\n```\n![c](c.png)\n```\n![d](d.png)', `![a](${base}//uploads/x/a.png) ![b](${base}/b.png)\n\`\`\`\n![c](c.png)\n\`\`\`\n![d](${base}/d.png)`],
  ])('%s', (_name, input, output) => {
    expect(absoluteImageUrls(input, base)).toBe(output);
  });
  it('leaves no description alone', () => {
    expect(absoluteImageUrls(null, base)).toBeNull();
    expect(absoluteImageUrls('', base)).toBe('');
  });
});
