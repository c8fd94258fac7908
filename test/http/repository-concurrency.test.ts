import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInlineProjections } from '../../src/commands/kernel/append-steps.js';
import { GENESIS_HASH } from '../../src/eventstore/hash.js';
import { appendToStream, readStream } from '../../src/eventstore/store.js';
import { inlineProjectors } from '../../src/projections/registry.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Branches that do not contend (issue 23 §2): each ref is a stream of its own, so writes to
 * different branches of one project never conflict, and writes to one branch behave as git's
 * compare-and-swap on it — a creation is won once, commits queue on the head they find.
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const CLIENTS = 8;
const repo = (id: number, rest: string) => `/projects/${id}/repository${rest}`;
const commitTo = (id: number, branch: string, path: string, startBranch?: string) =>
  api.post(repo(id, '/commits'), { branch, commit_message: `Add ${path}`, actions: [{ action: 'create', file_path: path, content: `${path}\n` }], ...(startBranch ? { start_branch: startBranch } : {}) });

describe('concurrent ref writes', () => {
  it('commits of 8 clients on 8 branches all land, none refused, each on its own stream', async () => {
    const id = (await createProject(api, { initialize_with_readme: true })).id;
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => api.post(repo(id, '/branches'), { branch: `b${i}`, ref: 'master' })));
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => commitTo(id, `b${i}`, `r${round}.txt`)));
      expect(answers.map((a) => a.status)).toEqual(Array(CLIENTS).fill(201));
    }
    for (let i = 0; i < CLIENTS; i++) {
      const titles = (await api.get(repo(id, '/commits'), { query: { ref_name: `b${i}` } })).body.map((c: any) => c.title);
      expect(titles).toEqual(['Add r2.txt', 'Add r1.txt', 'Add r0.txt', 'Initial commit']);
    }
    const streams = await api.handle.db.selectFrom('events').select('stream_id').distinct().where('stream_id', 'like', `repository-${id}:%`).execute();
    expect(streams.map((s) => s.stream_id).sort()).toEqual([...Array.from({ length: CLIENTS }, (_, i) => `repository-${id}:refs/heads/b${i}`), `repository-${id}:refs/heads/master`].sort());
  });

  it('commits of 8 clients on one branch each land on the head they find: no update is lost', async () => {
    const id = (await createProject(api, { initialize_with_readme: true })).id;
    const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => commitTo(id, 'master', `f${i}.txt`)));
    expect(answers.map((a) => a.status)).toEqual(Array(CLIENTS).fill(201));
    const log = (await api.get(repo(id, '/commits'), { query: { ref_name: 'master', per_page: 100 } })).body;
    expect(log).toHaveLength(CLIENTS + 1);
    // A line: each commit's parent is the one before it.
    for (let i = 0; i < CLIENTS; i++) expect(log[i].parent_ids).toEqual([log[i + 1].id]);
    const files = (await api.get(repo(id, '/tree'), { query: { ref: 'master', per_page: 100 } })).body.map((e: any) => e.name);
    expect(files.sort()).toEqual([...Array.from({ length: CLIENTS }, (_, i) => `f${i}.txt`), 'README.md'].sort());
  });

  it('a branch 8 clients create at once is created once: one 201, the others Branch already exists', async () => {
    const id = (await createProject(api, { initialize_with_readme: true })).id;
    const answers = await Promise.all(Array.from({ length: CLIENTS }, () => api.post(repo(id, '/branches'), { branch: 'race', ref: 'master' })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const lost of answers.filter((a) => a.status !== 201)) expect(lost).toMatchObject({ status: 400, body: { message: 'Branch already exists' } });
    expect((await api.repositoryEvents(id)).filter((e) => e.type === 'BranchCreated' && e.data.branch === 'race')).toHaveLength(1);
  });

  it('a tag 8 clients create at once, at different commits, is created once', async () => {
    const id = (await createProject(api, { initialize_with_readme: true })).id;
    const answers = await Promise.all(Array.from({ length: CLIENTS }, () => api.post(repo(id, '/tags'), { tag_name: 'v1', ref: 'master', message: 'One' })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const lost of answers.filter((a) => a.status !== 201)) expect(lost).toMatchObject({ status: 400, body: { message: 'Tag v1 already exists' } });
  });

  it("decides a ref written before refs had streams of their own on the project's stream of old (its predecessor)", async () => {
    const id = (await createProject(api, { initialize_with_readme: true })).id;
    const head = (await api.get(repo(id, '/commits/master'))).body.id as string;
    // What the log held when a project's refs were one stream: a branch made there.
    const streamId = `repository-${id}`;
    await api.handle.db.transaction().execute(async (trx) => {
      await appendToStream(trx, {
        streamId,
        expectedVersion: 0,
        headHash: GENESIS_HASH,
        events: [{ type: 'BranchCreated', schemaVersion: 2, data: { project_id: id, branch: 'old', new_sha: head, commits: [], commit_details: [] }, index: { projectId: id } }],
        metadata: {},
        occurredAt: new Date(),
      });
      await runInlineProjections(trx, inlineProjectors(), await readStream(trx, streamId));
    });
    expect(await api.post(repo(id, '/branches'), { branch: 'old', ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Branch already exists' } });
    expect((await commitTo(id, 'old', 'more.txt')).status).toBe(201);
    expect((await api.del(repo(id, '/branches/old'))).status).toBe(204);
    expect((await api.events(`repository-${id}:refs/heads/old`)).map((e) => e.type)).toEqual(['BranchUpdated', 'BranchDeleted']);
  });
});
