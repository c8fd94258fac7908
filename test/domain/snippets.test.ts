import { describe, expect, it } from 'vitest';
import { type SnippetCommand, type SnippetEvent, humanSize, snippetDecider, snippetEventIndex, snippetStreamId } from '../../src/domain/snippets.js';
import { canCreatePersonalSnippet, canOnPersonalSnippet, canOnProjectSnippet } from '../../src/domain/policy/snippet.js';
import type { ProjectSubject } from '../../src/domain/policy/project.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(snippetDecider);

const ID = 7;
const limits = { restrictedVisibility: [] as string[], isAdmin: false, sizeLimit: 1024 };
const createCommand = (overrides: Partial<Extract<SnippetCommand, { type: 'CreateSnippet' }>> = {}): SnippetCommand => ({
  type: 'CreateSnippet',
  projectId: null,
  authorId: 3,
  title: 'Hello',
  fileName: 'hello.rb',
  content: 'puts 1',
  description: null,
  visibility: 'internal',
  ...limits,
  ...overrides,
});
const created: SnippetEvent = {
  type: 'SnippetCreated',
  data: { id: ID, project_id: null, author_id: 3, title: 'Hello', file_name: 'hello.rb', content: 'puts 1', description: null, visibility: 'internal' },
};
const update = (fields: Omit<Extract<SnippetCommand, { type: 'UpdateSnippet' }>, 'type' | keyof typeof limits>, extra: Partial<typeof limits> = {}): SnippetCommand => ({
  type: 'UpdateSnippet',
  ...limits,
  ...extra,
  ...fields,
});

describe('CreateSnippet', () => {
  it('creates a personal snippet', () => {
    on(ID).given().when(createCommand()).then([created]);
  });

  it('creates a project snippet, indexed under its project', () => {
    const event = { type: 'SnippetCreated', data: { ...created.data, project_id: 9 } } as SnippetEvent;
    on(ID).given().when(createCommand({ projectId: 9 })).then([event]);
    expect(snippetEventIndex(event)).toEqual({ projectId: 9, targetType: 'Snippet', targetId: ID });
    expect(snippetStreamId(ID)).toBe('snippet-7');
  });

  it("validates as GitLab's Snippet model does, every error at once", () => {
    on(ID)
      .given()
      .when(createCommand({ title: ' ', content: '  ', fileName: 'x'.repeat(256) }))
      .then(rejected('invalid', { fields: { title: ["can't be blank"], file_name: ['is too long (maximum is 255 characters)'], content: ["can't be blank"] } }));
    on(ID).given().when(createCommand({ title: 't'.repeat(256) })).then(rejected('invalid', { fields: { title: ['is too long (maximum is 255 characters)'] } }));
  });

  it('bounds the content by snippet_size_limit, in bytes', () => {
    on(ID)
      .given()
      .when(createCommand({ content: 'é'.repeat(600) }))
      .then(rejected('invalid', { fields: { content: ['is too long (1.17 KB). The maximum size is 1 KB.'] } }));
  });

  it('refuses a restricted visibility to non-administrators, before validating', () => {
    const restricted = { restrictedVisibility: ['public'] };
    on(ID)
      .given()
      .when(createCommand({ visibility: 'public', title: '', ...restricted }))
      .then(rejected('invalid', { fields: { visibility_level: ['Public has been restricted by your GitLab administrator'] } }));
    on(ID)
      .given()
      .when(createCommand({ visibility: 'public', ...restricted, isAdmin: true }))
      .then([{ type: 'SnippetCreated', data: { ...created.data, visibility: 'public' } } as SnippetEvent]);
  });
});

describe('UpdateSnippet', () => {
  it('records only what changes', () => {
    on(ID)
      .given(created)
      .when(update({ title: 'Hello', content: 'puts 2', description: 'd' }))
      .then([{ type: 'SnippetUpdated', data: { id: ID, project_id: null, changes: { content: 'puts 2', description: 'd' } } }]);
    on(ID).given(created).when(update({ title: 'Hello', visibility: 'internal' })).then([]);
  });

  it('refuses a restricted visibility only when it changes', () => {
    const restricted = { restrictedVisibility: ['internal', 'public'] };
    on(ID).given(created).when(update({ title: 'New' }, restricted)).then([{ type: 'SnippetUpdated', data: { id: ID, project_id: null, changes: { title: 'New' } } }]);
    on(ID)
      .given(created)
      .when(update({ visibility: 'public' }, restricted))
      .then(rejected('invalid', { fields: { visibility_level: ['Public has been restricted by your GitLab administrator'] } }));
  });

  it('checks the size of new content only', () => {
    const big: SnippetEvent = { type: 'SnippetCreated', data: { ...created.data, content: 'x'.repeat(2000) } };
    on(ID).given(big).when(update({ title: 'Renamed' })).then([{ type: 'SnippetUpdated', data: { id: ID, project_id: null, changes: { title: 'Renamed' } } }]);
    on(ID).given(created).when(update({ content: 'y'.repeat(2000) })).then(rejected('invalid', { fields: { content: ['is too long (1.95 KB). The maximum size is 1 KB.'] } }));
  });

  it('is "404 Snippet Not Found" once deleted', () => {
    on(ID).given(created, { type: 'SnippetDeleted', data: { id: ID, project_id: null } }).when(update({ title: 'x' })).then(rejected('not_found', { subject: 'Snippet' }));
  });
});

describe('DeleteSnippet', () => {
  it('deletes', () => {
    on(ID).given(created).when({ type: 'DeleteSnippet' }).then([{ type: 'SnippetDeleted', data: { id: ID, project_id: null } }]);
    on(ID).given().when({ type: 'DeleteSnippet' }).then(rejected('not_found', { subject: 'Snippet' }));
  });
});

describe("ActiveSupport's number_to_human_size", () => {
  it.each([
    [1, '1 Byte'],
    [60, '60 Bytes'],
    [1024, '1 KB'],
    [1500, '1.46 KB'],
    [52428800, '50 MB'],
    [1048575, '1020 KB'],
  ])('%d → %s', (bytes, text) => expect(humanSize(bytes)).toBe(text));
});

describe('snippet policies (GitLab 12.10)', () => {
  const viewer = (id: number, extra: { isAdmin?: boolean; external?: boolean } = {}) => ({ id, isAdmin: false, external: false, today: '2030-01-01', ...extra });
  const settings = { issues_access_level: 'enabled', merge_requests_access_level: 'enabled', wiki_access_level: 'enabled', snippets_access_level: 'enabled', builds_access_level: 'enabled', repository_access_level: 'enabled' } as const;
  const project = (role: number | null, v = viewer(5), extra: { archived?: boolean } = {}): ProjectSubject => ({
    kind: 'project',
    viewer: v,
    role,
    project: { visibility: 'public', archived: extra.archived ?? false, request_access_enabled: true, container_registry_enabled: true, settings },
    personalOwnerId: null,
  });
  const snippet = (author_id: number, visibility: 'private' | 'internal' | 'public' = 'private') => ({ author_id, visibility });

  it('GlobalPolicy: signed-in users but external ones create personal snippets', () => {
    expect(canCreatePersonalSnippet(viewer(1))).toBe(true);
    expect(canCreatePersonalSnippet(viewer(1, { external: true }))).toBe(false);
    expect(canCreatePersonalSnippet(null)).toBe(false);
  });

  it('PersonalSnippetPolicy: the author and administrators', () => {
    expect(canOnPersonalSnippet(viewer(3), snippet(3))).toBe(true);
    expect(canOnPersonalSnippet(viewer(4), snippet(3, 'public'))).toBe(false);
    expect(canOnPersonalSnippet(viewer(4, { isAdmin: true }), snippet(3))).toBe(true);
  });

  it("ProjectSnippetPolicy: maintainers and the author; never another's internal snippet; archived projects are read-only", () => {
    expect(canOnProjectSnippet(project(40), snippet(3), 'update_snippet')).toBe(true);
    expect(canOnProjectSnippet(project(40), snippet(3, 'internal'), 'update_snippet')).toBe(false);
    expect(canOnProjectSnippet(project(30), snippet(3), 'update_snippet')).toBe(false);
    expect(canOnProjectSnippet(project(30, viewer(3)), snippet(3, 'internal'), 'admin_snippet')).toBe(true);
    // An author below reporter updates but does not delete their snippet.
    expect(canOnProjectSnippet(project(10, viewer(3)), snippet(3), 'update_snippet')).toBe(true);
    expect(canOnProjectSnippet(project(10, viewer(3)), snippet(3), 'admin_snippet')).toBe(false);
    expect(canOnProjectSnippet(project(null, viewer(1, { isAdmin: true })), snippet(3, 'internal'), 'admin_snippet')).toBe(true);
    expect(canOnProjectSnippet(project(40, viewer(5), { archived: true }), snippet(5), 'update_snippet')).toBe(false);
  });
});
