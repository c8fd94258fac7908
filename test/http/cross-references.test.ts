import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInlineProjections } from '../../src/commands/kernel/append-steps.js';
import { storeObjects } from '../../src/commands/repository.js';
import { commit as commitObject } from '../../src/domain/repository/objects.js';
import { GENESIS_HASH } from '../../src/eventstore/hash.js';
import { appendToStream, readStream } from '../../src/eventstore/store.js';
import { inlineProjectors, PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { findCommits } from '../../src/projections/repository/queries.js';
import { createGroup, createProject } from '../support/fixtures.js';
import { startIssueWorld, type IssueVisibility } from '../support/issues.js';
import { grantRoles, type Callers } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let projects: Readonly<Record<IssueVisibility, number>>;
let issue: (projectId: number, body?: Record<string, unknown>, token?: string | null) => Promise<number>;
const paths = {} as Record<IssueVisibility, string>;

beforeAll(async () => {
  ({ api, callers, projects, issue } = await startIssueWorld());
  for (const visibility of ['private', 'internal', 'public'] as const) {
    paths[visibility] = (await api.get(`/projects/${projects[visibility]}`, { token: callers.admin.token })).body.path_with_namespace;
  }
});
afterAll(() => api.close());

type Note = { id: number; body: string; system: boolean; author: { id: number }; noteable_iid: number };
const mentions = async (projectId: number, iid: number, token: string | null) => {
  const listed = await api.get(`/projects/${projectId}/issues/${iid}/notes`, { token, query: { sort: 'asc' } });
  expect(listed.status, listed.text).toBe(200);
  return (listed.body as Note[]).filter((n) => n.system && n.body.startsWith('mentioned in'));
};

describe('cross-reference system notes ("mentioned in …")', () => {
  it('writes "mentioned in issue #n" on an issue a description or a comment references, once per mentioner', async () => {
    const token = callers.developer.token;
    const target = await issue(projects.public, { title: 'Target' }, token);
    const source = await issue(projects.public, { title: 'Source', description: `Relates to #${target}, and to #${target} again; \`#99\` is code` }, token);
    const [note] = await mentions(projects.public, target, token);
    expect(await mentions(projects.public, target, token)).toEqual([note]);
    expect(note).toMatchObject({ body: `mentioned in issue #${source}`, system: true, author: { id: callers.developer.user!.id }, noteable_iid: target });
    expect((await api.get(`/projects/${projects.public}/issues/${target}/notes/${note!.id}`, { token })).body).toEqual(note);
    const thread = (await api.get(`/projects/${projects.public}/issues/${target}/discussions`, { token })).body.find((d: { notes: Note[] }) => d.notes[0]!.id === note!.id);
    expect(thread).toMatchObject({ individual_note: true, notes: [note] });

    // Editing the description, and a comment on the source, mention the target again: no second note.
    await api.put(`/projects/${projects.public}/issues/${source}`, { description: `Still #${target}` }, { token });
    await api.post(`/projects/${projects.public}/issues/${source}/notes`, { body: `See #${target}` }, { token });
    expect((await mentions(projects.public, target, token)).map((n) => n.body)).toEqual([`mentioned in issue #${source}`]);

    // A comment on another issue mentions as that issue; an issue never mentions itself.
    const third = await issue(projects.public, { title: 'Third' }, token);
    await api.post(`/projects/${projects.public}/issues/${third}/notes`, { body: `Same as #${target} and #${third}` }, { token: callers.guest.token });
    expect((await mentions(projects.public, target, token)).map((n) => [n.body, n.author.id])).toEqual([
      [`mentioned in issue #${source}`, callers.developer.user!.id],
      [`mentioned in issue #${third}`, callers.guest.user!.id],
    ]);
    expect(await mentions(projects.public, third, token)).toEqual([]);
  });

  it('names another project by its path, and shows the note only to readers of the mentioner', async () => {
    const target = await issue(projects.public, { title: 'Public target' }, callers.developer.token);
    const source = await issue(projects.private, { title: 'Private source', description: `Blocks ${paths.public}#${target}` }, callers.developer.token);
    const namespace = paths.public.slice(0, paths.public.lastIndexOf('/'));
    const privateRef = paths.private.slice(0, paths.private.lastIndexOf('/')) === namespace ? paths.private.slice(paths.private.lastIndexOf('/') + 1) : paths.private;
    expect((await mentions(projects.public, target, callers.developer.token)).map((n) => n.body)).toEqual([`mentioned in issue ${privateRef}#${source}`]);
    // Note#cross_reference_not_visible_for?: a reader of the target who may not read the source sees no note, and GETs a 404.
    const [note] = await mentions(projects.public, target, callers.developer.token);
    expect(await mentions(projects.public, target, callers.nonMember.token)).toEqual([]);
    expect((await api.get(`/projects/${projects.public}/issues/${target}/notes/${note!.id}`, { token: callers.nonMember.token })).status).toBe(404);

    // A confidential source shows to its project's reporters, not to its guests.
    const confidential = await issue(projects.public, { title: 'Secret', confidential: true, description: `Also #${target}` }, callers.developer.token);
    expect((await mentions(projects.public, target, callers.reporter.token)).map((n) => n.body)).toContain(`mentioned in issue #${confidential}`);
    expect((await mentions(projects.public, target, callers.guest.token)).map((n) => n.body)).not.toContain(`mentioned in issue #${confidential}`);
  });

  it('writes nothing for a mention by someone who may not read the target', async () => {
    const target = await issue(projects.private, { title: 'Hidden target' }, callers.developer.token);
    const outsider = await api.post(`/projects`, { name: `outsider-${Date.now()}`, visibility: 'public' }, { token: callers.nonMember.token });
    expect(outsider.status, outsider.text).toBe(201);
    const created = await api.post(`/projects/${outsider.body.id}/issues`, { title: 'Pointing', description: `${paths.private}#${target}` }, { token: callers.nonMember.token });
    expect(created.status).toBe(201);
    expect(await mentions(projects.private, target, callers.maintainer.token)).toEqual([]);
  });

  it('writes them between issues and merge requests, which makes them related merge requests', async () => {
    const group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
    const project = await createProject(api, { token: callers.owner.token!, group, visibility: 'private', initialize_with_readme: true });
    await grantRoles(api, callers, { projects: project.id });
    const token = callers.developer.token!;
    const target = await issue(project.id, { title: 'Wanted' }, token);
    const other = await issue(project.id, { title: 'Other' }, token);
    const branch = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'work', start_branch: 'master', commit_message: 'Work', actions: [{ action: 'create', file_path: 'w.txt', content: 'w\n' }] }, { token });
    expect(branch.status, branch.text).toBe(201);
    const mr = (await api.post(`/projects/${project.id}/merge_requests`, { title: 'Work', source_branch: 'work', target_branch: 'master' }, { token })).body;
    const related = async (iid: number) => (await api.get(`/projects/${project.id}/issues/${iid}/related_merge_requests`, { token })).body.map((m: { iid: number }) => m.iid);
    expect(await related(target)).toEqual([]);
    // A comment on the merge request mentions as the merge request.
    await api.post(`/projects/${project.id}/merge_requests/${mr.iid}/notes`, { body: `Does #${target}` }, { token });
    expect((await mentions(project.id, target, token)).map((n) => n.body)).toEqual([`mentioned in merge request !${mr.iid}`]);
    expect(await related(target)).toEqual([mr.iid]);
    // An issue whose description references the merge request: a note on it, and it is related.
    await api.put(`/projects/${project.id}/issues/${other}`, { description: `Waiting for !${mr.iid}` }, { token });
    const onMr = (await api.get(`/projects/${project.id}/merge_requests/${mr.iid}/notes`, { token, query: { sort: 'asc' } })).body as Note[];
    expect(onMr.filter((n) => n.system && n.body.startsWith('mentioned')).map((n) => n.body)).toEqual([`mentioned in issue #${other}`]);
    expect(await related(other)).toEqual([mr.iid]);
  });

  it('writes "mentioned in commit <sha>" for a pushed commit, the same after a rebuild', async () => {
    const token = callers.maintainer.token;
    const target = await issue(projects.private, { title: 'Committed against' }, token);
    const commit = await api.post(`/projects/${projects.private}/repository/commits`, { branch: 'master', commit_message: `Fix the thing\n\nRefs #${target}`, actions: [{ action: 'create', file_path: 'x.txt', content: 'x\n' }] }, { token });
    expect(commit.status, commit.text).toBe(201);
    expect((await mentions(projects.private, target, token)).map((n) => [n.body, n.author.id])).toEqual([[`mentioned in commit ${commit.body.id}`, callers.maintainer.user!.id]]);
    // A guest of a private project may not read its code: the commit's note is hidden from them.
    expect(await mentions(projects.private, target, callers.guest.token)).toEqual([]);

    const calls = [() => api.get(`/projects/${projects.private}/issues/${target}/notes`, { token }), () => api.get(`/projects/${projects.public}/issues`, { token })];
    const before = await Promise.all(calls.map(async (call) => (await call()).text));
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await Promise.all(calls.map(async (call) => (await call()).text))).toEqual(before);
  });

  it("writes a pushed commit's note as the user whose email is the commit's author email, else as the pusher", async () => {
    const token = callers.maintainer.token;
    const emailOf = async (caller: 'developer' | 'nonMember') => (await api.get(`/users/${callers[caller].user!.id}`, { token: callers.admin.token })).body.email as string;
    const target = await issue(projects.private, { title: 'Authored against' }, token);
    const push = async (message: string, author: { name: string; email: string }) => {
      const created = await api.post(`/projects/${projects.private}/repository/commits`, { branch: 'master', commit_message: message, author_name: author.name, author_email: author.email, actions: [{ action: 'create', file_path: `a-${Math.random()}.txt`, content: 'a\n' }] }, { token });
      expect(created.status, created.text).toBe(201);
      return created.body.id as string;
    };
    const byDeveloper = await push(`Refs #${target}`, { name: 'Someone', email: (await emailOf('developer')).toUpperCase() });
    const byStranger = await push(`Also #${target}`, { name: 'Stranger', email: `nobody-${Date.now()}@example.invalid` });
    // The commit's author may not read the private issue: GitLab's reference extractor, run as the author, finds nothing.
    await push(`Sees #${target}`, { name: 'Outsider', email: await emailOf('nonMember') });
    expect((await mentions(projects.private, target, token)).map((n) => [n.body, n.author.id])).toEqual([
      [`mentioned in commit ${byDeveloper}`, callers.developer.user!.id],
      [`mentioned in commit ${byStranger}`, callers.maintainer.user!.id],
    ]);
    const before = (await api.get(`/projects/${projects.private}/issues/${target}/notes`, { token })).text;
    await rebuildProjections(api.handle, PROJECTORS);
    expect((await api.get(`/projects/${projects.private}/issues/${target}/notes`, { token })).text).toEqual(before);
  });

  it("keeps a pushed commit's note by the user its author email named at push time, whatever the emails become", async () => {
    const token = callers.maintainer.token;
    const admin = { token: callers.admin.token };
    const stamp = `${process.pid}-${Date.now()}`;
    const alice = (await api.createUser({ username: `alice-${stamp}`, email: `alice-${stamp}@example.com` })).user as { id: number; email: string };
    const target = await issue(projects.public, { title: 'Pushed against' }, token);
    const push = async (message: string, email: string) => {
      const created = await api.post(`/projects/${projects.public}/repository/commits`, { branch: 'master', commit_message: message, author_name: 'Committer', author_email: email, actions: [{ action: 'create', file_path: `p-${Math.random()}.txt`, content: 'p\n' }] }, { token });
      expect(created.status, created.text).toBe(201);
      return created.body.id as string;
    };
    const byAlice = await push(`Refs #${target}`, alice.email.toUpperCase());
    const unknownEmail = `unknown-${stamp}@example.com`;
    const byUnknown = await push(`Also #${target}`, unknownEmail);
    // The branch events record each commit's author as the user then: Alice, and no one.
    const moves = (await readStream(api.handle.db, `repository-${projects.public}:refs/heads/master`)).slice(-2);
    expect(moves.map((e) => [e.schemaVersion, e.data])).toEqual([
      [4, expect.objectContaining({ commits: [byAlice], commit_details: [{ message: `Refs #${target}`, author_name: 'Committer', author_id: alice.id }] })],
      [4, expect.objectContaining({ commits: [byUnknown], commit_details: [{ message: `Also #${target}`, author_name: 'Committer', author_id: null }] })],
    ]);
    const expected = [
      [`mentioned in commit ${byAlice}`, alice.id],
      [`mentioned in commit ${byUnknown}`, callers.maintainer.user!.id],
    ];
    expect((await mentions(projects.public, target, token)).map((n) => [n.body, n.author.id])).toEqual(expected);

    // Alice's email changes, Bob takes her old one, Carol the unknown one: the notes stay as pushed.
    const changed = await api.put(`/users/${alice.id}`, { email: `alice-new-${stamp}@example.com`, skip_reconfirmation: true }, admin);
    expect(changed.status, changed.text).toBe(200);
    const bob = (await api.createUser({ username: `bob-${stamp}`, email: alice.email })).user as { id: number };
    await api.createUser({ username: `carol-${stamp}`, email: unknownEmail });
    expect((await mentions(projects.public, target, token)).map((n) => [n.body, n.author.id])).toEqual(expected);
    const before = (await api.get(`/projects/${projects.public}/issues/${target}/notes`, { token })).text;
    await rebuildProjections(api.handle, PROJECTORS);
    expect((await api.get(`/projects/${projects.public}/issues/${target}/notes`, { token })).text).toEqual(before);

    // A branch event written before the authors were recorded (schema version 3) keeps the
    // rule of its time: the author email resolved when read, Bob's now, the pusher's once he changes it.
    const [head] = await findCommits(api.handle.db, projects.public, [byUnknown]);
    const signature = { name: 'Old Committer', email: alice.email, time: 1_700_000_000, tzOffset: 0 };
    const old = commitObject({ tree: head!.tree, parents: [byUnknown], author: signature, committer: signature, message: `Long ago #${target}` });
    const streamId = `repository-${projects.public}:refs/heads/legacy-${stamp}`;
    await api.handle.db.transaction().execute(async (trx) => {
      await storeObjects(trx, projects.public, [old]);
      await appendToStream(trx, {
        streamId,
        expectedVersion: 0,
        headHash: GENESIS_HASH,
        events: [
          {
            type: 'BranchCreated',
            schemaVersion: 3,
            data: { project_id: projects.public, branch: `legacy-${stamp}`, new_sha: old.sha, commits: [old.sha], commit_details: [{ message: `Long ago #${target}`, author_name: 'Old Committer' }], commit_count: 1 },
            index: { projectId: projects.public },
          },
        ],
        metadata: { actor_id: callers.developer.user!.id },
        occurredAt: new Date(),
      });
      await runInlineProjections(trx, inlineProjectors(), await readStream(trx, streamId));
    });
    const legacy = async () => (await mentions(projects.public, target, token)).map((n) => [n.body, n.author.id]).at(-1);
    expect(await legacy()).toEqual([`mentioned in commit ${old.sha}`, bob.id]);
    expect((await api.put(`/users/${bob.id}`, { email: `bob-new-${stamp}@example.com`, skip_reconfirmation: true }, admin)).status).toBe(200);
    expect(await legacy()).toEqual([`mentioned in commit ${old.sha}`, callers.developer.user!.id]);
    expect((await mentions(projects.public, target, token)).slice(0, 2).map((n) => [n.body, n.author.id])).toEqual(expected);
  });

  it('resolves a reference among the issues and projects of the moment it is written, the same after a rebuild and as of a position', async () => {
    const token = callers.developer.token;
    const admin = { token: callers.admin.token };
    const group = await createGroup(api, { token: callers.owner.token!, visibility: 'public' });
    const renamed = await createProject(api, { token: callers.owner.token!, group, visibility: 'public' });
    const named = await issue(renamed.id, { title: 'Named by its old path' }, callers.owner.token);
    const first = await issue(projects.public, { title: 'First' }, token);
    // `#next` names no issue yet; `group/renamed#1` names the project before its rename.
    await api.post(`/projects/${projects.public}/issues/${first}/notes`, { body: `See #${first + 1} and ${renamed.path_with_namespace}#${named}` }, { token });
    const next = await issue(projects.public, { title: 'Next' }, token);
    expect(next).toBe(first + 1);
    const moved = await api.put(`/projects/${renamed.id}`, { path: `${renamed.path}-moved` }, { token: callers.owner.token });
    expect(moved.status, moved.text).toBe(200);

    const noteLists = [`/projects/${projects.public}/issues/${next}/notes`, `/projects/${renamed.id}/issues/${named}/notes`];
    const read = (query?: Record<string, string>) => Promise.all(noteLists.map(async (path) => (await api.get(path, { ...admin, ...(query ? { query } : {}) })).text));
    const live = await read();
    expect(live.map((text) => (JSON.parse(text) as Note[]).map((n) => n.body))).toEqual([[], [`mentioned in issue ${paths.public}#${first}`]]);
    // Replayed a page at a time, the issue opened and the project renamed after the comment are
    // applied before it unless the page is cut there (Projector.readsNow).
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
    const { rows } = await sql<{ p: string }>`select max(global_position)::text as p from events`.execute(api.handle.db);
    expect(await read({ as_of: rows[0]!.p })).toEqual(live);
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await read()).toEqual(live);
  });

  it("resolves a reference to a personal project by its owner's username of the moment, as of a position too (a replay merges no rename)", async () => {
    const admin = { token: callers.admin.token };
    const owner = await api.createUser();
    const project = await api.post('/projects', { name: 'personal', visibility: 'public' }, { token: owner.token });
    expect(project.status, project.text).toBe(201);
    const target = await issue(project.body.id, { title: 'Personal target' }, owner.token);
    const rename = async (username: string) => expect((await api.put(`/users/${owner.user.id}`, { username }, admin)).status).toBe(200);
    await rename(`${owner.user.username}-b`);
    const mentioner = await issue(projects.public, { title: 'Mentioner' }, callers.developer.token);
    await api.post(`/projects/${projects.public}/issues/${mentioner}/notes`, { body: `See ${owner.user.username}-b/personal#${target}` }, { token: callers.developer.token });
    await rename(`${owner.user.username}-c`);
    const notes = (query?: Record<string, string>) => api.get(`/projects/${project.body.id}/issues/${target}/notes`, { ...admin, ...(query ? { query } : {}) });
    const live = await notes();
    expect((live.body as Note[]).map((n) => n.body)).toEqual([`mentioned in issue ${paths.public}#${mentioner}`]);
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
    const { rows } = await sql<{ p: string }>`select max(global_position)::text as p from events`.execute(api.handle.db);
    expect((await notes({ as_of: rows[0]!.p })).text).toEqual(live.text);
  });
});
