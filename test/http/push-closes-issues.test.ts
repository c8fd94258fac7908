import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClosingReactor } from '../../src/commands/issue-closing.js';
import { objectsNamedBy } from '../../src/domain/repository/named-objects.js';
import { readStream } from '../../src/eventstore/store.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { createCallers, grantRoles, type Callers } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Closing issues from commits pushed to the default branch (GitLab 12's ProcessCommitWorker):
 * `git push`, the commits API and a merge; closed by the commit's author, "closed via commit
 * <sha>", only what the pusher may update, once — replays and rebuilds included.
 */

const { git, newDir, remove } = gitScratch('forgelog-closes-');

let api: TestServer;
let callers: Callers;
let group: { id: number; full_path: string };
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
  group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
});
afterAll(async () => {
  await api.close();
  remove();
});

type Project = { id: number; http_url_to_repo: string; path_with_namespace: string; path: string };
/** A private project of the group with the member roles; `members: false`, the owner's own without them. */
async function newProject(options: { members?: boolean } = {}): Promise<Project> {
  const made = await createProject(api, { token: callers.owner.token!, group: options.members === false ? undefined : (group as never), visibility: 'private' });
  if (options.members !== false) await grantRoles(api, callers, { projects: made.id });
  return (await api.get(`/projects/${made.id}`, { token: callers.owner.token })).body;
}
const emailOf = (role: 'reporter' | 'developer' | 'maintainer') => `${callers[role].user!.username}@example.com`;

async function openIssue(projectId: number, title: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(`/projects/${projectId}/issues`, { title, ...extra }, { token: callers.owner.token });
  expect(res.status, res.text).toBe(201);
  return res.body.iid;
}
const issueOf = async (projectId: number, iid: number) => (await api.get(`/projects/${projectId}/issues/${iid}`, { token: callers.admin.token })).body;
const closings = async (projectId: number, iid: number) => {
  const { id } = await issueOf(projectId, iid);
  return (await readStream(api.handle.db, `issue-${id}`)).filter((e) => e.type === 'IssueClosed');
};
const systemNotes = async (projectId: number, iid: number) =>
  ((await api.get(`/projects/${projectId}/issues/${iid}/notes`, { token: callers.admin.token, query: { sort: 'asc' } })).body as { body: string; system: boolean; author: { id: number } }[])
    .filter((n) => n.system && !n.body.startsWith('mentioned in'))
    .map((n) => [n.body, n.author.id]);

/** Waits until the closing reactor has handled the branch's last move (and so everything before it). */
async function reacted(projectId: number, branch: string) {
  const events = await readStream(api.handle.db, `repository-${projectId}:refs/heads/${branch}`);
  const last = events.at(-1)!;
  await eventually(() => api.handle.db.selectFrom('reactor_receipts').select('event_id').where('reactor', '=', issueClosingReactor.name).where('event_id', '=', last.eventId).executeTakeFirst());
  return last;
}

/** A working copy of the project with `origin` as the token's user. */
async function workingCopy(project: Project, token: string): Promise<string> {
  const dir = newDir();
  await git(['init', '-q', '-b', 'master', dir]);
  await git(['remote', 'add', 'origin', withToken(project.http_url_to_repo, token)], dir);
  return dir;
}
async function commit(dir: string, message: string, author: { name: string; email: string } = { name: 'Ada Pusher', email: 'ada@example.com' }): Promise<string> {
  const path = `f-${Math.random().toString(36).slice(2)}.txt`;
  writeFileSync(join(dir, path), `${message}\n`);
  await git(['add', path], dir);
  await git(['commit', '-q', '-m', message], dir, { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email });
  return (await git(['rev-parse', 'HEAD'], dir)).trim();
}

describe('git push to the default branch', () => {
  it('closes the issues its commits close, as the commit author, each one the pusher may update', async () => {
    const project = await newProject();
    const other = await newProject();
    // The maintainer pushes (the default branch is protected); they are no member of `outside`.
    const outside = await newProject({ members: false });
    const one = await openIssue(project.id, 'One');
    const two = await openIssue(project.id, 'Two');
    const mentioned = await openIssue(project.id, 'Only mentioned');
    const done = await openIssue(project.id, 'Closed already');
    const elsewhere = await openIssue(other.id, 'Elsewhere');
    const hidden = await openIssue(outside.id, 'Hidden');
    const strangers = await openIssue(project.id, 'By a stranger');
    expect((await api.put(`/projects/${project.id}/issues/${done}`, { state_event: 'close' }, { token: callers.developer.token })).status).toBe(200);

    const dir = await workingCopy(project, callers.maintainer.token!);
    await commit(dir, 'Initial');
    await git(['push', '-q', 'origin', 'master'], dir);
    const byReporter = await commit(dir, `Fix the thing\n\nCloses #${one}, fixes ${other.path_with_namespace}#${elsewhere} and #${done}.\nResolves ${outside.path_with_namespace}#${hidden}. See #${mentioned}.`, {
      name: 'Rita Reporter',
      email: emailOf('reporter').toUpperCase(),
    });
    const byStranger = await commit(dir, `Fixes #${strangers}\n\nImplements #${two}`, { name: 'Stranger', email: `nobody-${Date.now()}@example.invalid` });
    await git(['push', '-q', 'origin', 'master'], dir);
    await reacted(project.id, 'master');

    const reporter = callers.reporter.user!.id;
    const pusher = callers.maintainer.user!.id;
    expect(await issueOf(project.id, one)).toMatchObject({ state: 'closed', closed_by: { id: reporter } });
    expect(await issueOf(other.id, elsewhere)).toMatchObject({ state: 'closed', closed_by: { id: reporter } });
    // The commit's email matches no user: the pusher closes.
    expect(await issueOf(project.id, strangers)).toMatchObject({ state: 'closed', closed_by: { id: pusher } });
    expect(await issueOf(project.id, two)).toMatchObject({ state: 'closed', closed_by: { id: pusher } });
    // Mentioned without a closing word, or in a project the pusher may not read: left open.
    expect((await issueOf(project.id, mentioned)).state).toBe('opened');
    expect((await issueOf(outside.id, hidden)).state).toBe('opened');
    // Closed already: closed once, by who closed it.
    expect(await issueOf(project.id, done)).toMatchObject({ state: 'closed', closed_by: { id: callers.developer.user!.id } });
    expect(await closings(project.id, done)).toHaveLength(1);

    // SystemNoteService.change_status with the commit as source: Commit#to_reference from the issue's project.
    expect(await systemNotes(project.id, one)).toEqual([[`closed via commit ${byReporter}`, reporter]]);
    expect(await systemNotes(other.id, elsewhere)).toEqual([[`closed via commit ${project.path}@${byReporter}`, reporter]]);
    expect(await systemNotes(project.id, strangers)).toEqual([[`closed via commit ${byStranger}`, pusher]]);
    expect(await systemNotes(project.id, done)).toEqual([['closed', callers.developer.user!.id]]);
    // commit.create_cross_references!(author, closed_issues): no "mentioned in" note on what the commit closes.
    const mentions = async (projectId: number, iid: number) =>
      ((await api.get(`/projects/${projectId}/issues/${iid}/notes`, { token: callers.admin.token })).body as { body: string; system: boolean }[]).filter((n) => n.system && n.body.startsWith('mentioned in')).map((n) => n.body);
    expect(await mentions(project.id, mentioned)).toEqual([`mentioned in commit ${byReporter}`]);
    expect(await mentions(project.id, one)).toEqual([]);
    expect(await mentions(project.id, done)).toEqual([]);
    // ResourceStateEvent of the closing, by the author.
    const states = await api.get(`/projects/${project.id}/issues/${one}/resource_state_events`, { token: callers.developer.token });
    expect(states.status).toBe(200);
    expect(states.body.map((e: { state: string; user: { id: number } }) => [e.state, e.user.id])).toEqual([['closed', reporter]]);

    // The activity: the author closed it (EventCreateService#close_issue with the author).
    const feed = await api.get(`/projects/${project.id}/events`, { token: callers.developer.token, query: { target_type: 'issue', action: 'closed' } });
    expect(feed.status).toBe(200);
    expect(
      feed.body
        .filter((e: { target_iid: number }) => [one, two, strangers].includes(e.target_iid))
        .map((e: { action_name: string; target_iid: number; author_id: number }) => [e.action_name, e.target_iid, e.author_id])
        .sort((a: number[], b: number[]) => a[1]! - b[1]!),
    ).toEqual([
      ['closed', one, reporter],
      ['closed', two, pusher],
      ['closed', strangers, pusher],
    ].sort((a, b) => (a[1] as number) - (b[1] as number)));
  });

  it('closes nothing from another branch, and closes when those commits reach the default branch', async () => {
    const project = await newProject();
    const issue = await openIssue(project.id, 'Later');
    const dir = await workingCopy(project, callers.maintainer.token!);
    await commit(dir, 'Initial');
    await git(['push', '-q', 'origin', 'master'], dir);
    await git(['checkout', '-q', '-b', 'topic'], dir);
    const fix = await commit(dir, `Closes #${issue}`, { name: 'Dev', email: emailOf('developer') });
    await commit(dir, 'Another');
    await git(['push', '-q', 'origin', 'topic'], dir);
    await reacted(project.id, 'topic');
    expect((await issueOf(project.id, issue)).state).toBe('opened');
    // A fast-forward of master: commits_between(old, new) holds the fix.
    await git(['push', '-q', 'origin', 'topic:master'], dir);
    await reacted(project.id, 'master');
    expect(await issueOf(project.id, issue)).toMatchObject({ state: 'closed', closed_by: { id: callers.developer.user!.id } });
    expect(await systemNotes(project.id, issue)).toEqual([[`closed via commit ${fix}`, callers.developer.user!.id]]);
  });

  it('closes only what the pusher may update: not a confidential issue they may not see, nor another\'s issue where they are a guest', async () => {
    const project = await newProject();
    const other = await newProject();
    // The pusher is a guest of `other`.
    const demoted = await api.put(`/projects/${other.id}/members/${callers.maintainer.user!.id}`, { access_level: 10 }, { token: callers.owner.token });
    expect(demoted.status, demoted.text).toBe(200);
    const secret = await openIssue(other.id, 'Secret', { confidential: true });
    const notTheirs = await openIssue(other.id, 'Not theirs');
    const theirs = await api.post(`/projects/${other.id}/issues`, { title: 'Theirs' }, { token: callers.maintainer.token });
    expect(theirs.status).toBe(201);
    const dir = await workingCopy(project, callers.maintainer.token!);
    await commit(dir, 'Initial');
    await git(['push', '-q', 'origin', 'master'], dir);
    const ref = (iid: number) => `${other.path}#${iid}`;
    await commit(dir, `Closes ${ref(secret)}, ${ref(notTheirs)} and ${ref(theirs.body.iid)}`, { name: 'Dev', email: emailOf('developer') });
    await git(['push', '-q', 'origin', 'master'], dir);
    await reacted(project.id, 'master');
    expect((await issueOf(other.id, secret)).state).toBe('opened');
    expect((await issueOf(other.id, notTheirs)).state).toBe('opened');
    // IssueCollection#updatable_by_user: the author of an issue may update it; the commit's author closes it.
    expect(await issueOf(other.id, theirs.body.iid)).toMatchObject({ state: 'closed', closed_by: { id: callers.developer.user!.id } });
  });
});

describe('the commits API and merges', () => {
  it('a commit to the default branch closes; one to another branch does not; a replay closes nothing twice; a rebuild changes nothing', async () => {
    const project = (await createProject(api, { token: callers.owner.token!, group: group as never, visibility: 'private', initialize_with_readme: true })) as { id: number };
    await grantRoles(api, callers, { projects: project.id });
    const fixed = await openIssue(project.id, 'Fixed by the API');
    const elsewhere = await openIssue(project.id, 'Fixed on a branch');
    const write = async (branch: string, message: string, extra: Record<string, unknown> = {}) => {
      const res = await api.post(
        `/projects/${project.id}/repository/commits`,
        { branch, commit_message: message, actions: [{ action: 'create', file_path: `${Math.random()}.txt`, content: 'x\n' }], ...extra },
        { token: callers.maintainer.token },
      );
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    await write('feature', `Closes #${elsewhere}`, { start_branch: 'master' });
    await reacted(project.id, 'feature');
    const sha = await write('master', `Closes #${fixed}`, { author_name: 'Rita', author_email: emailOf('reporter') });
    const move = await reacted(project.id, 'master');
    const reporter = callers.reporter.user!.id;
    expect(await issueOf(project.id, fixed)).toMatchObject({ state: 'closed', closed_by: { id: reporter } });
    expect((await issueOf(project.id, elsewhere)).state).toBe('opened');
    expect(await systemNotes(project.id, fixed)).toEqual([[`closed via commit ${sha}`, reporter]]);
    // The closing names the commit (`forgelog events verify` checks the repository has it); another closing names none.
    const [closing] = await closings(project.id, fixed);
    expect(closing!.data).toMatchObject({ by_id: reporter, via_commit: { project_id: project.id, sha } });
    expect(objectsNamedBy('IssueClosed', closing!.data)).toEqual([{ projectId: project.id, sha, type: 'commit', field: 'via_commit.sha' }]);

    // The reaction run again (a worker stopped before its receipt) closes nothing, even after a reopening.
    await issueClosingReactor.react(move, api.runtime.app.commands);
    expect(await closings(project.id, fixed)).toHaveLength(1);
    expect((await api.put(`/projects/${project.id}/issues/${fixed}`, { state_event: 'reopen' }, { token: callers.maintainer.token })).status).toBe(200);
    await issueClosingReactor.react(move, api.runtime.app.commands);
    expect((await issueOf(project.id, fixed)).state).toBe('opened');
    expect(await closings(project.id, fixed)).toHaveLength(1);

    const calls = [`/projects/${project.id}/issues/${fixed}`, `/projects/${project.id}/issues/${fixed}/notes`, `/projects/${project.id}/events`];
    const before = await Promise.all(calls.map(async (path) => (await api.get(path, { token: callers.maintainer.token })).text));
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await Promise.all(calls.map(async (path) => (await api.get(path, { token: callers.maintainer.token })).text))).toEqual(before);
    expect(await closings(project.id, fixed)).toHaveLength(1);
  });

  it('a merge closes an issue its description and a commit both close once, and ignores its merge commit\'s message', async () => {
    const project = (await createProject(api, { token: callers.owner.token!, group: group as never, visibility: 'private', initialize_with_readme: true })) as { id: number };
    await grantRoles(api, callers, { projects: project.id });
    const both = await openIssue(project.id, 'Both');
    const byCommit = await openIssue(project.id, 'By a commit');
    const byMergeCommit = await openIssue(project.id, 'By the merge commit');
    const made = await api.post(
      `/projects/${project.id}/repository/commits`,
      { branch: 'fix', start_branch: 'master', commit_message: `Closes #${both}\n\nFixes #${byCommit}`, author_name: 'Dev', author_email: emailOf('developer'), actions: [{ action: 'create', file_path: 'fix.txt', content: 'fix\n' }] },
      { token: callers.developer.token },
    );
    expect(made.status, made.text).toBe(201);
    await reacted(project.id, 'fix');
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Fix', source_branch: 'fix', target_branch: 'master', description: `Closes #${both}` }, { token: callers.developer.token });
    expect(mr.status, mr.text).toBe(201);
    const merged = await api.put(`/projects/${project.id}/merge_requests/${mr.body.iid}/merge`, { merge_commit_message: `Merge fix\n\nCloses #${byMergeCommit}` }, { token: callers.maintainer.token });
    expect(merged.status, merged.text).toBe(200);
    await reacted(project.id, 'master');
    // PostMergeService closes it first, by the merger; the commit finds it closed.
    expect(await issueOf(project.id, both)).toMatchObject({ state: 'closed', closed_by: { id: callers.maintainer.user!.id } });
    expect(await closings(project.id, both)).toHaveLength(1);
    expect(await systemNotes(project.id, both)).toEqual([['closed', callers.maintainer.user!.id]]);
    expect(await issueOf(project.id, byCommit)).toMatchObject({ state: 'closed', closed_by: { id: callers.developer.user!.id } });
    expect(await systemNotes(project.id, byCommit)).toEqual([[`closed via commit ${made.body.id}`, callers.developer.user!.id]]);
    // Commit#merged_merge_request?: GitLab's own merge commit closes nothing.
    expect((await issueOf(project.id, byMergeCommit)).state).toBe('opened');
  });
});
