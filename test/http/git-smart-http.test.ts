import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { readPack } from '../../src/domain/repository/pack-read.js';
import { DELIM, FLUSH, pktLine } from '../../src/domain/repository/pkt-line.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, packetsOf, packetTexts, withToken } from '../support/git.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `git clone` and `git fetch` over smart HTTP (git-upload-pack, protocol v0 and v2) with the
 * real git (2.39), and the protocol's answers byte for byte.
 */

const { dir: scratch, git, result, newDir, remove } = gitScratch('forgelog-smart-');
let dirs = 0;

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
async function commitTo(projectId: number, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(repo(projectId, '/commits'), body);
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body.id;
}
async function tag(projectId: number, body: Record<string, unknown>): Promise<{ target: string }> {
  const res = await api.post(repo(projectId, '/tags'), body);
  if (res.status !== 201) throw new Error(`tag: ${res.status} ${res.text}`);
  return res.body;
}
const create = (path: string, content: string, more: Record<string, unknown> = {}) => ({ action: 'create', file_path: path, content, ...more });
const update = (path: string, content: string) => ({ action: 'update', file_path: path, content });

/** Runs git with GIT_TRACE_CURL and answers the requests it made (method and path). */
async function traced(args: string[], cwd = scratch): Promise<string[]> {
  const trace = join(scratch, `trace-${++dirs}`);
  await git(args, cwd, { GIT_TRACE_CURL: trace, GIT_TRACE_CURL_NO_DATA: '1' });
  return [...readFileSync(trace, 'utf8').matchAll(/Send header: (GET|POST) (\S+) HTTP/g)].map((m) => `${m[1]} ${m[2]!.replace(/\/[^/]+\/[^/]+\.git/, '/…')}`);
}

/** Loose objects in a repository (fetch unpacks packs of fewer than 100 objects). */
const looseCount = async (dir: string) => Number(/^count: (\d+)$/m.exec(await git(['count-objects', '-v'], dir))![1]);


/** A fetch response's packets before the pack, the pack (band 1) and the progress (band 2). */
function splitResult(bytes: Buffer, header: string): { lines: string[]; pack: Buffer; progress: string } {
  const packets = packetsOf(bytes);
  const at = packets.findIndex((p) => p.type === 'data' && p.data.toString('latin1') === header);
  expect(at, packetTexts(packets).join('|')).toBeGreaterThanOrEqual(0);
  const pack: Buffer[] = [];
  let progress = '';
  for (const packet of packets.slice(at + 1)) {
    if (packet.type !== 'data') continue;
    if (packet.data[0] === 1) pack.push(packet.data.subarray(1));
    else if (packet.data[0] === 2) progress += packet.data.subarray(1).toString();
    else throw new Error(`band ${packet.data[0]}: ${packet.data.subarray(1).toString()}`);
  }
  expect(packets.at(-1)!.type).toBe('flush');
  return { lines: packetTexts(packets.slice(0, at + 1)), pack: Buffer.concat(pack), progress };
}

const uploadPack = (url: string, body: Buffer, headers: Record<string, string> = {}) =>
  fetch(`${url}/git-upload-pack`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': 'application/x-git-upload-pack-request', ...headers } });
const v2 = { 'git-protocol': 'version=2' };
const v2Request = (command: string, args: string[]) => Buffer.concat([pktLine(`command=${command}\n`), pktLine('agent=git/2.39.2\n'), pktLine('object-format=sha1\n'), DELIM, ...args.map((a) => pktLine(`${a}\n`)), FLUSH]);

describe('git clone and fetch over smart HTTP', () => {
  let project: { id: number; http_url_to_repo: string };
  let annotated: { target: string };
  let master: string;
  beforeAll(async () => {
    project = (await api.post('/projects', { name: 'Smart Clone', visibility: 'public', initialize_with_readme: true })).body;
    await commitTo(project.id, {
      branch: 'master',
      commit_message: 'Add tools\n\nwith a body',
      actions: [
        create('bin/run', '#!/bin/sh\necho hi\n'),
        create('docs/guide.md', '# Guide\n'),
        create('docs/deep/er/nested.txt', 'nested\n'),
        create('logo.bin', Buffer.from([0, 1, 2, 255, 0, 10]).toString('base64'), { encoding: 'base64' }),
      ],
    });
    await commitTo(project.id, { branch: 'master', commit_message: 'chmod', actions: [{ action: 'chmod', file_path: 'bin/run', execute_filemode: true }] });
    annotated = await tag(project.id, { tag_name: 'v1.0', ref: 'master', message: 'Release 1.0' });
    await commitTo(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Feature', actions: [create('feature.txt', 'f\n'), update('docs/guide.md', '# Guide\n\nfeature\n')] });
    await commitTo(project.id, { branch: 'master', commit_message: 'Master moves on', actions: [create('docs/deep/other.txt', 'o\n')] });
    await tag(project.id, { tag_name: 'light', ref: 'feature' });
    await commitTo(project.id, { branch: 'other', start_branch: 'master', commit_message: 'Other', actions: [create('other.txt', 'x\n')] });
    // A merge commit on master (merge request, merged).
    const mr = (await api.post(`/projects/${project.id}/merge_requests`, { title: 'Feature', source_branch: 'feature', target_branch: 'master' })).body;
    await eventually(async () => {
      const res = await api.put(`/projects/${project.id}/merge_requests/${mr.iid}/merge`, {});
      return res.status === 200 ? res : undefined;
    }, 30_000);
    master = (await api.get(repo(project.id, '/branches/master'))).body.commit.id;
    expect((await api.get(repo(project.id, `/commits/${master}`))).body.parent_ids).toHaveLength(2);
  });

  for (const version of [0, 2]) {
    it(`clones with protocol v${version}: smart requests only, fsck --strict, the API's history, tags, modes and bytes`, async () => {
      const dir = newDir();
      const requests = await traced(['-c', `protocol.version=${version}`, 'clone', '-q', project.http_url_to_repo, dir]);
      expect(requests).toEqual(['GET /…/info/refs?service=git-upload-pack', ...Array(requests.length - 1).fill('POST /…/git-upload-pack')]);
      await git(['fsck', '--strict', '--no-dangling'], dir);
      // The same commits (commits of one second may be listed in another order: the API's `all` is not this test's).
      const all = (await git(['log', '--all', '--format=%H'], dir)).trim().split('\n');
      const api100 = (await api.get(repo(project.id, '/commits'), { query: { all: true, per_page: 100 } })).body.map((c: { id: string }) => c.id);
      expect(all.sort()).toEqual(api100.sort());
      for (const branch of ['master', 'feature', 'other']) {
        const log = (await git(['log', '--format=%H', `origin/${branch}`], dir)).trim().split('\n');
        expect(log).toEqual((await api.get(repo(project.id, '/commits'), { query: { ref_name: branch, per_page: 100 } })).body.map((c: { id: string }) => c.id));
      }
      expect((await git(['branch', '-r'], dir)).split('\n').map((s) => s.trim()).filter(Boolean)).toEqual(['origin/HEAD -> origin/master', 'origin/feature', 'origin/master', 'origin/other']);
      expect((await git(['rev-parse', 'HEAD'], dir)).trim()).toBe(master);
      expect((await git(['tag', '-l'], dir)).trim().split('\n')).toEqual(['light', 'v1.0']);
      expect((await git(['cat-file', '-t', 'v1.0'], dir)).trim()).toBe('tag');
      expect((await git(['rev-parse', 'v1.0'], dir)).trim()).toBe(annotated.target);
      expect((await git(['cat-file', '-t', 'light'], dir)).trim()).toBe('commit');
      expect(await git(['ls-files', '-s', 'bin/run'], dir)).toMatch(/^100755 /);
      expect([...readFileSync(join(dir, 'logo.bin'))]).toEqual([0, 1, 2, 255, 0, 10]);
      expect(readFileSync(join(dir, 'docs/deep/er/nested.txt'), 'utf8')).toBe('nested\n');
      expect(readFileSync(join(dir, 'docs/guide.md'), 'utf8')).toBe('# Guide\n\nfeature\n');
    });
  }

  it('fetches incrementally with v0 and v2: only the new objects, and the annotated tag on them', async () => {
    const [old, neu] = [newDir(), newDir()];
    await git(['-c', 'protocol.version=0', 'clone', '-q', project.http_url_to_repo, old]);
    await git(['-c', 'protocol.version=2', 'clone', '-q', project.http_url_to_repo, neu]);
    const head = await commitTo(project.id, { branch: 'master', commit_message: 'Deep change', actions: [update('docs/deep/er/nested.txt', 'nested, changed\n')] });
    const v2tag = await tag(project.id, { tag_name: 'v2.0', ref: head, message: 'Release 2.0' });
    // commit, root tree, docs/, docs/deep/, docs/deep/er/, the blob, the tag object.
    for (const [dir, version] of [[old, 0], [neu, 2]] as const) {
      const before = await looseCount(dir);
      const requests = await traced(['-c', `protocol.version=${version}`, 'fetch', '-q', 'origin'], dir);
      expect(requests.every((r) => r.endsWith('info/refs?service=git-upload-pack') || r.endsWith('/git-upload-pack')), requests.join('\n')).toBe(true);
      expect(await looseCount(dir)).toBe(before + 7);
      expect((await git(['rev-parse', 'origin/master'], dir)).trim()).toBe(head);
      expect((await git(['rev-parse', 'v2.0'], dir)).trim()).toBe(v2tag.target);
      await git(['fsck', '--strict', '--no-dangling'], dir);
    }
    // A second fetch has nothing to bring.
    expect(await git(['fetch', 'origin'], neu)).toBe('');
  });

  it('fetches a reachable commit by SHA, and refuses one that is no ref of the project', async () => {
    const dir = newDir();
    await git(['init', '-q', dir]);
    const first = (await api.get(repo(project.id, '/commits'), { query: { ref_name: 'master', per_page: 100 } })).body.at(-1).id;
    await git(['-c', 'protocol.version=2', 'fetch', '-q', project.http_url_to_repo, first], dir);
    expect((await git(['rev-parse', 'FETCH_HEAD'], dir)).trim()).toBe(first);
    const unknown = 'deadbeef'.repeat(5);
    for (const version of [0, 2]) {
      await expect(git(['-c', `protocol.version=${version}`, 'fetch', '-q', project.http_url_to_repo, unknown], dir)).rejects.toThrow(/not our ref deadbeef/);
    }
    const url = project.http_url_to_repo;
    const v0 = await uploadPack(url, Buffer.concat([pktLine(`want ${unknown} multi_ack_detailed side-band-64k\n`), FLUSH, pktLine('done\n')]));
    expect([v0.status, v0.headers.get('content-type'), Buffer.from(await v0.arrayBuffer())]).toEqual([200, 'application/x-git-upload-pack-result', pktLine(`ERR upload-pack: not our ref ${unknown}\n`)]);
    const v2res = await uploadPack(url, v2Request('fetch', [`want ${unknown}`, 'done']), v2);
    expect(Buffer.from(await v2res.arrayBuffer())).toEqual(pktLine(`ERR upload-pack: not our ref ${unknown}\n`));
  });

  it('advertises v0 refs as git does: HEAD with the capabilities, refs by name, peeled tags', async () => {
    const res = await fetch(`${project.http_url_to_repo}/info/refs?service=git-upload-pack`);
    expect([res.status, res.headers.get('content-type'), res.headers.get('cache-control')]).toEqual([200, 'application/x-git-upload-pack-advertisement', 'no-cache, max-age=0, must-revalidate']);
    const lines = packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())));
    const branches = (await api.get(repo(project.id, '/branches'))).body as { name: string; commit: { id: string } }[];
    const tags = (await api.get(repo(project.id, '/tags'))).body as { name: string; target: string; commit: { id: string } }[];
    const sha = (name: string) => branches.find((b) => b.name === name)!.commit.id;
    const t = (name: string) => tags.find((x) => x.name === name)!;
    // The merged merge request's head ref (refs/merge-requests/:iid/head, docs/repository.md), between the branches and the tags.
    const [mr] = (await api.get(`/projects/${project.id}/merge_requests`, { query: { state: 'all' } })).body as { iid: number; sha: string }[];
    expect(lines).toEqual([
      '# service=git-upload-pack\n',
      'flush',
      `${sha('master')} HEAD\0multi_ack thin-pack side-band side-band-64k ofs-delta shallow deepen-since deepen-not deepen-relative no-progress include-tag multi_ack_detailed allow-tip-sha1-in-want allow-reachable-sha1-in-want symref=HEAD:refs/heads/master object-format=sha1 agent=forgelog/12.10.14-forgelog\n`,
      `${sha('feature')} refs/heads/feature\n`,
      `${sha('master')} refs/heads/master\n`,
      `${sha('other')} refs/heads/other\n`,
      `${mr!.sha} refs/merge-requests/${mr!.iid}/head\n`,
      `${t('light').target} refs/tags/light\n`,
      `${t('v1.0').target} refs/tags/v1.0\n`,
      `${t('v1.0').commit.id} refs/tags/v1.0^{}\n`,
      `${t('v2.0').target} refs/tags/v2.0\n`,
      `${t('v2.0').commit.id} refs/tags/v2.0^{}\n`,
      'flush',
    ]);
    // Without ?service= it is the dumb list.
    const dumb = await fetch(`${project.http_url_to_repo}/info/refs`);
    expect([dumb.headers.get('content-type'), (await dumb.text()).split('\n')[0]]).toEqual(['text/plain; charset=utf-8', `${sha('feature')}\trefs/heads/feature`]);
  });

  it("answers v2: the capabilities, and ls-refs with peel, symrefs and ref-prefix", async () => {
    const res = await fetch(`${project.http_url_to_repo}/info/refs?service=git-upload-pack`, { headers: v2 });
    expect(packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())))).toEqual(['version 2\n', 'agent=forgelog/12.10.14-forgelog\n', 'ls-refs=unborn\n', 'fetch=shallow\n', 'server-option\n', 'object-format=sha1\n', 'flush']);
    const tags = (await api.get(repo(project.id, '/tags'))).body as { name: string; target: string; commit: { id: string } }[];
    const v1 = tags.find((x) => x.name === 'v1.0')!;
    const master = (await api.get(repo(project.id, '/branches/master'))).body.commit.id;
    const ls = await uploadPack(project.http_url_to_repo, v2Request('ls-refs', ['peel', 'symrefs', 'ref-prefix HEAD', 'ref-prefix refs/tags/v1']), v2);
    expect([ls.status, ls.headers.get('content-type')]).toEqual([200, 'application/x-git-upload-pack-result']);
    expect(packetTexts(packetsOf(Buffer.from(await ls.arrayBuffer())))).toEqual([`${master} HEAD symref-target:refs/heads/master\n`, `${v1.target} refs/tags/v1.0 peeled:${v1.commit.id}\n`, 'flush']);
  });

  it('sends only what the haves lack, to a direct request, plain or gzipped, v0 and v2', async () => {
    const url = project.http_url_to_repo;
    const before = (await api.get(repo(project.id, '/branches/master'))).body.commit.id;
    const head = await commitTo(project.id, { branch: 'master', commit_message: 'Top change', actions: [create('top.txt', 'top\n')] });
    const body0 = Buffer.concat([pktLine(`want ${head} multi_ack_detailed side-band-64k ofs-delta\n`), FLUSH, pktLine(`have ${'ab'.repeat(20)}\n`), pktLine(`have ${before}\n`), pktLine('done\n')]);
    for (const headers of [{}, { 'content-encoding': 'gzip' }] as Record<string, string>[]) {
      const res = await uploadPack(url, 'content-encoding' in headers ? gzipSync(body0) : body0, headers);
      const { lines, pack, progress } = splitResult(Buffer.from(await res.arrayBuffer()), `ACK ${before}\n`);
      expect(lines).toEqual([`ACK ${before} common\n`, `ACK ${before}\n`]);
      const objects = await readPack(pack, { base: async () => undefined });
      // The commit, the root tree and the new blob: nothing of what `before` has.
      expect(objects.map((o) => o.type).sort()).toEqual(['blob', 'commit', 'tree']);
      expect(objects.find((o) => o.type === 'commit')!.sha).toBe(head);
      expect(progress).toContain('Enumerating objects: 3, done.');
    }
    // A round without done: the acknowledgments only.
    const round = await uploadPack(url, Buffer.concat([pktLine(`want ${head} multi_ack_detailed side-band-64k\n`), FLUSH, pktLine(`have ${before}\n`), FLUSH]));
    expect(packetTexts(packetsOf(Buffer.from(await round.arrayBuffer())))).toEqual([`ACK ${before} common\n`, 'NAK\n']);

    const ackOnly = await uploadPack(url, v2Request('fetch', [`want ${head}`, `have ${before}`, 'no-progress']), v2);
    expect(packetTexts(packetsOf(Buffer.from(await ackOnly.arrayBuffer())))).toEqual(['acknowledgments\n', `ACK ${before}\n`, 'flush']);
    const res = await uploadPack(url, gzipSync(v2Request('fetch', [`want ${head}`, `have ${before}`, 'done', 'no-progress'])), { ...v2, 'content-encoding': 'gzip' });
    const { lines, pack, progress } = splitResult(Buffer.from(await res.arrayBuffer()), 'packfile\n');
    expect([lines, progress]).toEqual([['packfile\n'], '']);
    expect((await readPack(pack, { base: async () => undefined })).length).toBe(3);
  });

  it('sends v0 the pack raw without side-band, and in packets of 1,000 bytes with side-band', async () => {
    const url = project.http_url_to_repo;
    const head = (await api.get(repo(project.id, '/branches/other'))).body.commit.id;
    const count = (await api.get(repo(project.id, '/commits'), { query: { ref_name: 'other', per_page: 100 } })).body.length;
    const raw = Buffer.from(await (await uploadPack(url, Buffer.concat([pktLine(`want ${head}\n`), FLUSH, pktLine('done\n')]))).arrayBuffer());
    expect(raw.subarray(0, 12).toString('latin1')).toBe('0008NAK\nPACK');
    const objects = await readPack(raw.subarray(8), { base: async () => undefined });
    expect(objects.filter((o) => o.type === 'commit').length).toBe(count);
    const small = Buffer.from(await (await uploadPack(url, Buffer.concat([pktLine(`want ${head} side-band no-progress\n`), FLUSH, pktLine('done\n')]))).arrayBuffer());
    const packets = packetsOf(small);
    expect(packets.every((p) => p.type !== 'data' || p.data.length <= 996)).toBe(true);
    const { pack, progress } = splitResult(small, 'NAK\n');
    expect(progress).toBe('');
    expect((await readPack(pack, { base: async () => undefined })).map((o) => o.sha)).toEqual(objects.map((o) => o.sha));
  });

  it('answers a body that is not pkt-lines 400, another media type 415, and too big a gzipped body 413', async () => {
    const url = project.http_url_to_repo;
    const bad = await uploadPack(url, Buffer.from('00zzwant nothing'));
    expect([bad.status, await bad.text()]).toEqual([400, 'Bad Request: protocol error: bad line length character: 00zz\n']);
    const cut = await uploadPack(url, Buffer.from('0032want 0123'));
    expect([cut.status, await cut.text()]).toEqual([400, 'Bad Request: the remote end hung up unexpectedly\n']);
    const notGzip = await uploadPack(url, Buffer.from('0000'), { 'content-encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    const type = await fetch(`${url}/git-upload-pack`, { method: 'POST', body: '0000', headers: { 'content-type': 'text/plain' } });
    expect([type.status, await type.text()]).toEqual([415, 'Unsupported Media Type\n']);
    const bomb = await uploadPack(url, gzipSync(Buffer.alloc(11 * 1024 * 1024)), { 'content-encoding': 'gzip' });
    expect([bomb.status, await bomb.text()]).toEqual([413, 'Request Entity Too Large\n']);
    // Four bytes a packet would be ~150 bytes of memory each: the count is bounded, not only the bytes.
    const swarm = await uploadPack(url, gzipSync(Buffer.from('0004'.repeat(2_000_000))), { 'content-encoding': 'gzip' });
    expect([swarm.status, await swarm.text()]).toEqual([413, 'Request Entity Too Large: more than 250000 pkt-lines\n']);
    const garbage = await uploadPack(url, Buffer.concat([pktLine('hello\n'), FLUSH]));
    expect(Buffer.from(await garbage.arrayBuffer())).toEqual(pktLine("ERR upload-pack: protocol error, expected to get 'want', not 'hello'\n"));
    const command = await uploadPack(url, v2Request('push', []), v2);
    expect(Buffer.from(await command.arrayBuffer())).toEqual(pktLine("ERR invalid command 'push'\n"));
    const empty = await uploadPack(url, FLUSH);
    expect([empty.status, await empty.text()]).toEqual([200, '']);
  });

  it('clones an empty repository as git does, with v0 and v2', async () => {
    const empty = await createProject(api, { visibility: 'public' });
    const url = `${api.url}/${empty.path_with_namespace}.git`;
    const res = await fetch(`${url}/info/refs?service=git-upload-pack`);
    expect(packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())))).toEqual([
      '# service=git-upload-pack\n',
      'flush',
      `${'0'.repeat(40)} capabilities^{}\0multi_ack thin-pack side-band side-band-64k ofs-delta shallow deepen-since deepen-not deepen-relative no-progress include-tag multi_ack_detailed allow-tip-sha1-in-want allow-reachable-sha1-in-want object-format=sha1 agent=forgelog/12.10.14-forgelog\n`,
      'flush',
    ]);
    for (const version of [0, 2]) {
      const dir = newDir();
      const { code, stderr } = await result(['-c', `protocol.version=${version}`, '-c', 'init.defaultBranch=main', 'clone', url, dir], scratch);
      expect(code).toBe(0);
      expect(stderr).toContain('You appear to have cloned an empty repository.');
      expect((await git(['branch', '-a'], dir)).trim()).toBe('');
      // v2's ls-refs names the unborn HEAD's branch.
      expect((await git(['symbolic-ref', 'HEAD'], dir)).trim()).toBe(version === 2 ? 'refs/heads/master' : 'refs/heads/main');
    }
  });
});

describe('private and internal projects', () => {
  let callers: Callers;
  const projects = new Map<Visibility, { id: number; url: string; head: string }>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'smarthttp' });
    for (const visibility of ['private', 'internal', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      const head = await commitTo(id, { branch: 'master', commit_message: 'Base', actions: [create('README.md', '# Hi\n')] });
      projects.set(visibility, { id, url: (await api.get(`/projects/${id}`)).body.http_url_to_repo, head });
    }
  });

  it('clones a private project with a token (v0 and v2); anonymous callers are asked to sign in, before their body is read', async () => {
    const { url, head } = projects.get('private')!;
    for (const version of [0, 2]) {
      const dir = newDir();
      await git(['-c', `protocol.version=${version}`, 'clone', '-q', withToken(url, callers.reporter.token!), dir]);
      await git(['fsck', '--strict', '--no-dangling'], dir);
      expect((await git(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);
      await expect(git(['-c', `protocol.version=${version}`, 'clone', '-q', url, newDir()])).rejects.toThrow(/Authentication failed|could not read Username/);
    }
    const anonymous = await uploadPack(url, Buffer.from('not pkt-lines at all'));
    expect([anonymous.status, anonymous.headers.get('www-authenticate'), await anonymous.text()]).toEqual([401, 'Basic realm="GitLab"', 'HTTP Basic: Access denied\n']);
    const guest = await uploadPack(url, Buffer.from('not pkt-lines at all'), basicAuth(callers.guest.token!));
    expect([guest.status, await guest.text()]).toEqual([403, 'You are not allowed to download code from this project.']);
  });

  // prettier-ignore
  const MATRIX: MatrixTable<Role, Visibility> = {
    'GET info/refs?service=git-upload-pack': {
      private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403, external: 404 },
      internal: { anonymous: 401, nonMember: 200, guest: 200, reporter: 200, admin: 200, blocked: 403, external: 404 },
      public: { anonymous: 200, nonMember: 200, guest: 200, reporter: 200, external: 200, blocked: 403 },
    },
    'POST git-upload-pack': {
      private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200, blocked: 403 },
      internal: { anonymous: 401, nonMember: 200, guest: 200, external: 404 },
      public: { anonymous: 200, nonMember: 200, external: 200 },
    },
  };

  describe('permissions', () => {
    permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
      const { url } = projects.get(visibility)!;
      const token = callers[caller].token;
      const headers = { ...v2, ...(token === null ? {} : basicAuth(token)) };
      const res =
        endpoint === 'POST git-upload-pack'
          ? await uploadPack(url, v2Request('ls-refs', ['ref-prefix refs/heads/']), headers)
          : await fetch(`${url}/info/refs?service=git-upload-pack`, { headers });
      if (res.status === 401) expect(res.headers.get('www-authenticate')).toBe('Basic realm="GitLab"');
      if (res.status === 200) expect(res.headers.get('content-type')).toMatch(/^application\/x-git-upload-pack-/);
      return res.status;
    });
  });
});
