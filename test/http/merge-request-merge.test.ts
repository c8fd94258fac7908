import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { currentMergeStatus } from '../../src/projections/merge-requests/mergeability.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Its README projects' master is protected by the tests themselves: none at the README's commit (default_branch_protection, test/http/readme-protection.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

let projectCounter = 0;

interface Fixture {
  id: number;
  path: string;
}

/** A project whose master has README.md (and `files`), through the API. */
async function project(files: Record<string, string> = {}, s: TestServer = api): Promise<Fixture> {
  const created = await s.post('/projects', { name: `merge-${++projectCounter}`, initialize_with_readme: true });
  expect(created.status).toBe(201);
  if (Object.keys(files).length > 0) await commit(created.body.id, 'master', 'Add files', files, undefined, s);
  return { id: created.body.id, path: created.body.path_with_namespace };
}

/** A commit of `files` (created or updated) on `branch`, started from master when new. */
async function commit(projectId: number, branch: string, message: string, files: Record<string, string>, token?: string, s: TestServer = api): Promise<string> {
  const exists = (await s.get(`/projects/${projectId}/repository/branches/${branch}`)).status === 200;
  const tree = await s.get(`/projects/${projectId}/repository/tree`, { query: { ref: exists ? branch : 'master', recursive: true, per_page: 100 } });
  const existing = new Set(tree.status === 200 ? tree.body.map((e: any) => e.path) : []);
  const actions = Object.entries(files).map(([file_path, content]) => ({ action: existing.has(file_path) ? 'update' : 'create', file_path, content }));
  const body = { branch, commit_message: message, actions, ...(exists ? {} : { start_branch: 'master' }) };
  const res = await s.post(`/projects/${projectId}/repository/commits`, body, token ? { token } : {});
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function open(projectId: number, title = 'Add a feature', source = 'feature', fields: Record<string, unknown> = {}, s: TestServer = api) {
  const res = await s.post(`/projects/${projectId}/merge_requests`, { title, source_branch: source, target_branch: 'master', ...fields });
  expect(res.status, res.text).toBe(201);
  return row(res.body.id, s);
}

const row = (id: number, s: TestServer = api) => s.handle.db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const head = async (projectId: number, branch: string) => (await api.get(`/projects/${projectId}/repository/branches/${branch}`)).body?.commit?.id as string | undefined;
const merge = (p: Fixture, iid: number, body: Record<string, unknown> = {}, token?: string) => api.put(`/projects/${p.id}/merge_requests/${iid}/merge`, body, token === undefined ? {} : { token });
/** The refresh reactor's check, once it has run. */
/**
 * A merge request's merge status once the reactors have caught up with the log: an opening
 * records its own, and what follows must not race the reactions to what came before it (a
 * branch's creation checked after the branch was deleted).
 */
const checked = async (id: number) => {
  await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
  return (await row(id)).merge_status;
};

/** Runs git on a bare repository holding the project's objects (loose, as git stores them). */
async function withGit<T>(projectId: number, run: (git: (...args: string[]) => string) => T): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'forgelog-merge-'));
  try {
    execFileSync('/usr/bin/git', ['init', '--bare', '-q', dir]);
    const { rows } = await sql<{ sha: string; type: string; content: Buffer }>`select sha, type, content from repository_objects where project_id = ${projectId}`.execute(api.handle.db);
    for (const object of rows) {
      const bytes = Buffer.concat([Buffer.from(`${object.type} ${object.content.length}\0`), Buffer.from(object.content)]);
      mkdirSync(join(dir, 'objects', object.sha.slice(0, 2)), { recursive: true });
      writeFileSync(join(dir, 'objects', object.sha.slice(0, 2), object.sha.slice(2)), deflateSync(bytes));
    }
    const { rows: branches } = await sql<{ name: string; sha: string }>`select name, sha from repository_branches where project_id = ${projectId}`.execute(api.handle.db);
    for (const branch of branches) execFileSync('/usr/bin/git', ['update-ref', `refs/heads/${branch.name}`, branch.sha], { cwd: dir });
    return run((...args) => execFileSync('/usr/bin/git', args, { cwd: dir }).toString());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('PUT /projects/:id/merge_requests/:iid/merge', () => {
  it('merges with a merge commit of the target and the source heads, in one transaction, and shows it in the activity', async () => {
    const p = await project();
    const featureHead = await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const masterBefore = await commit(p.id, 'master', 'Add b', { 'b.txt': 'b\n' });
    const mr = await open(p.id);
    expect(await checked(mr.id)).toBe('can_be_merged');

    const res = await merge(p, mr.iid);
    expect(res.status, res.text).toBe(200);
    const mergeSha = await head(p.id, 'master');
    expect(res.body).toMatchObject({ iid: mr.iid, state: 'merged', merge_commit_sha: mergeSha, squash_commit_sha: null, merged_by: { username: 'root' }, sha: featureHead });
    expect(mergeSha).not.toBe(masterBefore);
    const mergeCommit = (await api.get(`/projects/${p.id}/repository/commits/${mergeSha}`)).body;
    expect(mergeCommit).toMatchObject({
      parent_ids: [masterBefore, featureHead],
      message: `Merge branch 'feature' into 'master'\n\nAdd a feature\n\nSee merge request ${p.path}!${mr.iid}`,
      author_name: 'Administrator',
      committer_name: 'Administrator',
    });
    // The source branch stays unless asked.
    expect(await head(p.id, 'feature')).toBe(featureHead);
    // git agrees: a well-formed merge whose tree has both sides.
    await withGit(p.id, (git) => {
      git('fsck', '--strict', '--no-dangling');
      expect(git('rev-list', '--parents', '-n', '1', 'master').trim()).toBe(`${mergeSha} ${masterBefore} ${featureHead}`);
      expect(git('ls-tree', '--name-only', 'master').trim().split('\n')).toEqual(['README.md', 'a.txt', 'b.txt']);
      expect(git('log', '--format=%H', 'master').trim().split('\n')[0]).toBe(mergeSha);
    });
    // One transaction: the repository's move and the merge request's Merged.
    const repositoryEvents = await api.repositoryEvents(p.id);
    expect(repositoryEvents.at(-1)).toMatchObject({ type: 'BranchUpdated', data: { branch: 'master', old_sha: masterBefore, new_sha: mergeSha, commits: [mergeSha] } });
    const mrEvents = await api.events(`merge-request-${mr.id}`);
    expect(mrEvents.at(-1)).toMatchObject({ type: 'MergeRequestMerged', data: { merge_commit_sha: mergeSha, squash_commit_sha: null, by_id: 1 } });
    const { rows } = await sql<{ event_type: string; transaction_id: string }>`select event_type, transaction_id::text from events where (stream_id like ${`repository-${p.id}:%`} and data->>'new_sha' = ${mergeSha}) or (stream_id = ${`merge-request-${mr.id}`} and event_type = 'MergeRequestMerged')`.execute(api.handle.db);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.transaction_id).toBe(rows[1]!.transaction_id);

    const activity = await api.get(`/projects/${p.id}/events`, { query: { target_type: 'merge_request' } });
    expect(activity.body.map((e: any) => e.action_name)).toEqual(['accepted', 'opened']);
    expect(activity.body[0]).toMatchObject({ target_type: 'MergeRequest', target_iid: mr.iid, target_title: 'Add a feature' });

    // Merged is final: 405.
    expect(await merge(p, mr.iid)).toMatchObject({ status: 405, body: { message: '405 Method Not Allowed' } });
  });

  it('merges changes to different lines of one file (git merges them; a conflict is the same lines changed both ways)', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
    const p = await project({ 'list.txt': `${lines.join('\n')}\n` });
    await commit(p.id, 'feature', 'Change line 2', { 'list.txt': `${lines.map((l, i) => (i === 1 ? 'line two' : l)).join('\n')}\n` });
    await commit(p.id, 'master', 'Change line 9', { 'list.txt': `${lines.map((l, i) => (i === 8 ? 'line nine' : l)).join('\n')}\n` });
    const mr = await open(p.id);
    expect(await checked(mr.id)).toBe('can_be_merged');
    expect((await merge(p, mr.iid)).status).toBe(200);
    const file = await api.get(`/projects/${p.id}/repository/files/list.txt/raw`, { query: { ref: 'master' } });
    expect(file.text).toBe(`${lines.map((l, i) => (i === 1 ? 'line two' : i === 8 ? 'line nine' : l)).join('\n')}\n`);
  });

  it('refuses a conflicting merge request: cannot_be_merged once checked (405), 406 when its own check finds it', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    await commit(p.id, 'feature', 'Mine', { 'a.txt': 'mine\n' });
    const mr = await open(p.id);
    expect(await checked(mr.id)).toBe('can_be_merged');
    // The target moves under it: the refresh checks again.
    await commit(p.id, 'master', 'Theirs', { 'a.txt': 'theirs\n' });
    await eventually(async () => ((await row(mr.id)).merge_status === 'cannot_be_merged' ? true : undefined), 30_000);
    expect(await currentMergeStatus(api.handle.db, await row(mr.id))).toBe('cannot_be_merged');
    // MergeRequest#broken?: conflicts already found make it not mergeable (405).
    expect((await merge(p, mr.iid)).status).toBe(405);
    const shown = await api.get(`/projects/${p.id}/merge_requests/${mr.iid}`, { query: { include_diverged_commits_count: true } });
    expect(shown.body).toMatchObject({ merge_status: 'cannot_be_merged', has_conflicts: true, diverged_commits_count: 1 });
    expect((await row(mr.id)).state).toBe('opened');
  });

  it('answers 409 when sha is not the diff head, 405 for a closed merge request or a WIP title', async () => {
    const p = await project();
    const featureHead = await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    expect(await merge(p, mr.iid, { sha: '0'.repeat(40) })).toMatchObject({ status: 409, body: { message: `SHA does not match HEAD of source branch: ${featureHead}` } });
    expect(await merge(p, mr.iid, { sha: 'not a sha' })).toMatchObject({ status: 409 });
    // merge_when_pipeline_succeeds without a pipeline: neither immediately nor automatically mergeable.
    expect((await merge(p, mr.iid, { merge_when_pipeline_succeeds: true })).status).toBe(405);
    expect((await merge(p, mr.iid, { squash: 'maybe' })).status).toBe(400);
    const update = async (body: object) => expect((await api.put(`/projects/${p.id}/merge_requests/${mr.iid}`, body)).status).toBe(200);
    await update({ title: 'WIP: Add a feature' });
    expect((await merge(p, mr.iid)).status).toBe(405);
    await update({ title: 'Add a feature', state_event: 'close' });
    expect((await merge(p, mr.iid)).status).toBe(405);
    expect(await merge(p, 999)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    await update({ state_event: 'reopen' });
    expect(await checked(mr.id)).toBe('can_be_merged');
    expect(await merge(p, mr.iid, { sha: featureHead })).toMatchObject({ status: 200, body: { state: 'merged' } });
  });

  it('asks push or merge access to the target branch (401 otherwise, as can_be_merged_by?), 404 for a project the caller cannot see', async () => {
    const p = await project();
    await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    const [developer, reporter, stranger] = [await api.createUser(), await api.createUser(), await api.createUser()];
    await addMember(api, 'projects', p.id, developer.user.id, 30);
    await addMember(api, 'projects', p.id, reporter.user.id, 20);
    expect((await merge(p, mr.iid, {}, stranger.token)).status).toBe(404);
    expect((await api.put(`/projects/${p.id}/merge_requests/${mr.iid}/merge`, {}, { token: null })).status).toBe(401);
    expect(await merge(p, mr.iid, {}, reporter.token)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    // A protected target: maintainers push and merge; the developer may not…
    expect((await api.post(`/projects/${p.id}/protected_branches`, { name: 'master' })).status).toBe(201);
    expect((await merge(p, mr.iid, {}, developer.token)).status).toBe(401);
    // …until developers may merge into it.
    expect((await api.del(`/projects/${p.id}/protected_branches/master`)).status).toBe(204);
    expect((await api.post(`/projects/${p.id}/protected_branches`, { name: 'master', push_access_level: 40, merge_access_level: 30 })).status).toBe(201);
    const res = await merge(p, mr.iid, {}, developer.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: 'merged', merged_by: { id: developer.user.id } });
  });

  it('removes the source branch with should_remove_source_branch or force_remove_source_branch, unless it is protected', async () => {
    const p = await project();
    await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    expect((await merge(p, mr.iid, { should_remove_source_branch: true })).status).toBe(200);
    expect((await api.get(`/projects/${p.id}/repository/branches/feature`)).status).toBe(404);
    expect((await api.repositoryEvents(p.id)).slice(-2).map((e) => `${e.type} ${e.data.branch}`)).toEqual(['BranchUpdated master', 'BranchDeleted feature']);
    // The refresh does not close a merged merge request when its source goes.
    await settled(api);
    expect((await row(mr.id)).state).toBe('merged');

    await commit(p.id, 'forced', 'Add c', { 'c.txt': 'c\n' });
    const forced = await open(p.id, 'Forced', 'forced', { remove_source_branch: true });
    await checked(forced.id);
    expect((await merge(p, forced.iid)).status).toBe(200);
    expect((await api.get(`/projects/${p.id}/repository/branches/forced`)).status).toBe(404);

    await commit(p.id, 'kept', 'Add d', { 'd.txt': 'd\n' });
    expect((await api.post(`/projects/${p.id}/protected_branches`, { name: 'kept' })).status).toBe(201);
    const kept = await open(p.id, 'Kept', 'kept');
    await checked(kept.id);
    expect((await merge(p, kept.iid, { should_remove_source_branch: true })).status).toBe(200);
    expect((await api.get(`/projects/${p.id}/repository/branches/kept`)).status).toBe(200);
  });

  it("squashes the commits into one on the target's head, by the author, then merges it", async () => {
    const p = await project();
    const start = (await head(p.id, 'master'))!;
    await commit(p.id, 'feature', 'First', { 'a.txt': 'a\n' });
    const second = await commit(p.id, 'feature', 'Second', { 'b.txt': 'b\n' });
    const mr = await open(p.id, 'Squashed feature');
    await checked(mr.id);
    const res = await merge(p, mr.iid, { squash: true });
    expect(res.status, res.text).toBe(200);
    const squashSha = res.body.squash_commit_sha;
    expect(res.body).toMatchObject({ state: 'merged', squash: true, squash_commit_sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
    const squashed = (await api.get(`/projects/${p.id}/repository/commits/${squashSha}`)).body;
    // repository-merge.ts: the squash commit sits on the target's head.
    expect(squashed).toMatchObject({ parent_ids: [start], message: 'Squashed feature\n', author_name: 'Administrator' });
    const mergeCommit = (await api.get(`/projects/${p.id}/repository/commits/master`)).body;
    expect(mergeCommit.parent_ids).toEqual([start, squashSha]);
    await withGit(p.id, (git) => {
      git('fsck', '--strict', '--no-dangling');
      // The squash holds both commits' changes, and the feature's own commits are not on master.
      expect(git('ls-tree', '--name-only', squashSha).trim().split('\n')).toEqual(['README.md', 'a.txt', 'b.txt']);
      expect(git('rev-list', 'master').includes(second)).toBe(false);
    });
    expect((await api.events(`merge-request-${mr.id}`)).slice(-2).map((e) => e.type)).toEqual(['MergeRequestUpdated', 'MergeRequestMerged']);
  });
});

describe('the merge-request-refresh reactor', () => {
  it('records a new version and checks the status when the source branch moves, and closes the merge request when it is deleted', async () => {
    const p = await project();
    const first = await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    const second = await commit(p.id, 'feature', 'Add b', { 'b.txt': 'b\n' });
    const refreshed = await eventually(async () => {
      const now = await row(mr.id);
      return now.head_sha === second && now.merge_status !== 'unchecked' ? now : undefined;
    });
    expect(refreshed).toMatchObject({ merge_status: 'can_be_merged', changes_count: 2 });
    expect(refreshed.latest_version_id).not.toBe(mr.latest_version_id);
    const versions = await api.handle.db.selectFrom('merge_request_versions').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
    expect(versions.map((v) => v.commit_shas)).toEqual([[first], [second, first]]);
    // The merge takes the new head.
    expect((await merge(p, mr.iid, { sha: first })).status).toBe(409);

    await commit(p.id, 'other', 'Add c', { 'c.txt': 'c\n' });
    const other = await open(p.id, 'Other', 'other');
    await checked(other.id);
    expect((await api.del(`/projects/${p.id}/repository/branches/other`)).status).toBe(204);
    await eventually(async () => ((await row(other.id)).state === 'closed' ? true : undefined));
    expect(await api.events(`merge-request-${other.id}`)).toMatchObject([{ type: 'MergeRequestOpened' }, { type: 'MergeRequestMergeStatusChecked' }, { type: 'MergeRequestClosed', data: { by_id: 1 } }]);
    // A closed merge request whose source is gone is not mergeable.
    expect((await merge(p, other.iid)).status).toBe(405);
  });

  it('replays safely: reacting again to the same pushes records nothing new', async () => {
    const p = await project();
    await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    await commit(p.id, 'feature', 'Add b', { 'b.txt': 'b\n' });
    await eventually(async () => ((await row(mr.id)).merge_status !== 'unchecked' && (await row(mr.id)).changes_count === 2 ? true : undefined));
    const before = await api.events(`merge-request-${mr.id}`);
    const { mergeRequestRefreshReactor } = await import('../../src/commands/merge-request-merge.js');
    const { readStream } = await import('../../src/eventstore/store.js');
    const refStreams = (await api.handle.db.selectFrom('events').select('stream_id').distinct().where('stream_id', 'like', `repository-${p.id}:%`).execute()).map((r) => r.stream_id);
    for (const stream of [...refStreams, `merge-request-${mr.id}`]) {
      for (const event of await readStream(api.handle.db, stream, 0)) {
        if (mergeRequestRefreshReactor.handles.includes(event.type)) await mergeRequestRefreshReactor.react(event, api.runtime.app.commands);
      }
    }
    expect(await api.events(`merge-request-${mr.id}`)).toHaveLength(before.length);
  });

  it('keeps the target head each status was checked against, and does not check the same heads again', async () => {
    const p = await project();
    await commit(p.id, 'feature', 'Add a', { 'a.txt': 'a\n' });
    const mr = await open(p.id);
    await checked(mr.id);
    expect(await row(mr.id)).toMatchObject({ merge_status: 'can_be_merged', merge_status_target_sha: await head(p.id, 'master') });
    const { mergeRequestRefreshReactor } = await import('../../src/commands/merge-request-merge.js');
    const { readStream } = await import('../../src/eventstore/store.js');
    const created = (await readStream(api.handle.db, `repository-${p.id}:refs/heads/feature`, 0)).find((e) => e.type === 'BranchCreated')!;
    expect(created).toBeDefined();
    // The reaction to the branch's creation, as when the reactor runs behind the opening: it reads
    // the heads, finds their status recorded, and reads no object.
    const reactionReads = async () => {
      const queries: string[] = [];
      const db = api.handle.db.withPlugin({ transformQuery: ({ node }) => (queries.push(JSON.stringify(node)), node), transformResult: async ({ result }) => result });
      await mergeRequestRefreshReactor.react(created, { ...api.runtime.app.commands, db });
      return { heads: queries.some((q) => q.includes('repository_branches')), objects: queries.some((q) => q.includes('repository_objects')) };
    };
    expect(await reactionReads()).toEqual({ heads: true, objects: false });
    // The target moves and the status stays: nothing is recorded, so the next reaction checks again.
    await commit(p.id, 'master', 'Add m', { 'm.txt': 'm\n' });
    await checked(mr.id);
    expect(await row(mr.id)).toMatchObject({ merge_status: 'can_be_merged' });
    expect(await reactionReads()).toEqual({ heads: true, objects: true });
  });
});

describe('a merge that checks mergeability itself', () => {
  let quiet: TestServer;
  beforeAll(async () => {
    quiet = await startTestServer();
    await settled(quiet);
    // No reactions: the merge request's status stays unchecked until a merge or a view checks it.
    await quiet.runtime.worker!.stop();
  });
  afterAll(() => quiet.close());

  it('answers 406 "Branch cannot be merged" on conflicts, and the view computes cannot_be_merged', async () => {
    const p = await project({ 'a.txt': 'one\n' }, quiet);
    await commit(p.id, 'feature', 'Mine', { 'a.txt': 'mine\n' }, undefined, quiet);
    // The opening records the status it checked: the heads merge then.
    const opened = await open(p.id, 'Conflicting', 'feature', {}, quiet);
    expect(opened.merge_status).toBe('can_be_merged');
    await commit(p.id, 'master', 'Theirs', { 'a.txt': 'theirs\n' }, undefined, quiet);
    // A reopening sets it back to unchecked; no reaction checks it again.
    for (const state_event of ['close', 'reopen']) expect((await quiet.put(`/projects/${p.id}/merge_requests/${opened.iid}`, { state_event })).status).toBe(200);
    const mr = await row(opened.id, quiet);
    expect(mr).toMatchObject({ merge_status: 'unchecked', merge_status_target_sha: null });
    expect(await currentMergeStatus(quiet.handle.db, mr)).toBe('cannot_be_merged');
    // The single view checks an unchecked status (GitLab's check_mergeability), without recording it.
    const shown = await quiet.get(`/projects/${p.id}/merge_requests/${mr.iid}`);
    expect(shown.body).toMatchObject({ merge_status: 'cannot_be_merged', has_conflicts: true });
    const res = await quiet.put(`/projects/${p.id}/merge_requests/${mr.iid}/merge`, { sha: '0'.repeat(40) });
    expect(res).toMatchObject({ status: 406, body: { message: 'Branch cannot be merged' } });
    expect(await row(mr.id, quiet)).toMatchObject({ state: 'opened', merge_status: 'unchecked' });
  });
});
