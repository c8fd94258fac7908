import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIM, FLUSH, pktLine } from '../../src/domain/repository/pkt-line.js';
import { createProject, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, packetsOf, packetTexts, withToken } from '../support/git.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Shallow clones and fetches over smart HTTP with the real git (2.39), protocol v0 and v2:
 * `clone --depth`, `fetch --deepen`, `--shallow-since`, `--shallow-exclude`, `fetch
 * --unshallow`, a plain fetch into a shallow clone, and the protocol's shallow lines byte for
 * byte (gitprotocol-pack, gitprotocol-v2).
 */

const { dir: scratch, git, result: gitResult, newDir, remove } = gitScratch('forgelog-shallow-');

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const DAY = 86_400;
const T0 = 1_500_000_000;

/** A project with master: c1 … c6, a day apart (c_i at T0 + i days), and `old` at c2; pushed by the owner. */
async function history(visibility: 'public' | 'private' = 'public') {
  const made = await createProject(api, { token: callers.owner.token!, visibility });
  await grantRoles(api, callers, { projects: made.id });
  const project = (await api.get(`/projects/${made.id}`)).body as { id: number; http_url_to_repo: string };
  const dir = newDir();
  await git(['init', '-q', '-b', 'master', dir]);
  const commits: string[] = [];
  for (let i = 1; i <= 6; i++) {
    writeFileSync(join(dir, `file${i}.txt`), `content ${i}\n`);
    writeFileSync(join(dir, 'changing.txt'), `version ${i}\n`);
    await git(['add', '.'], dir);
    const date = `@${T0 + i * DAY} +0000`;
    await git(['commit', '-q', '-m', `Commit ${i}`], dir, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
    commits.push((await git(['rev-parse', 'HEAD'], dir)).trim());
  }
  await git(['branch', 'old', commits[1]!], dir);
  await git(['push', '-q', withToken(project.http_url_to_repo, callers.owner.token!), 'master', 'old'], dir);
  return { project, commits, dir };
}

const count = async (dir: string) => Number((await git(['rev-list', '--count', 'HEAD'], dir)).trim());
const shallowFile = (dir: string) => {
  const path = join(dir, '.git', 'shallow');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').sort() : [];
};
/** Every object the clone has (shallow commits' parents are not among them). */
const objects = async (dir: string) => Number(/^count: (\d+)$/m.exec(await git(['count-objects', '-v'], dir))![1]) + Number(/^in-pack: (\d+)$/m.exec(await git(['count-objects', '-v'], dir))![1]);
const fsck = (dir: string) => git(['fsck', '--strict', '--no-dangling'], dir);

describe('shallow clones and fetches with git', () => {
  for (const version of [0, 2]) {
    describe(`protocol v${version}`, () => {
      const v = ['-c', `protocol.version=${version}`];

      it('clone --depth 1: one commit, its tree and blobs only, fsck --strict; then --deepen, a plain fetch, --unshallow', async () => {
        const repo = await history();
        const dir = newDir();
        await git([...v, 'clone', '-q', '--depth', '1', repo.project.http_url_to_repo, dir]);
        expect(await count(dir)).toBe(1);
        expect(shallowFile(dir)).toEqual([repo.commits[5]]);
        // The commit, its root tree, file1..file6 and changing.txt: nothing of the history.
        expect(await objects(dir)).toBe(1 + 1 + 7);
        await fsck(dir);
        expect(readFileSync(join(dir, 'changing.txt'), 'utf8')).toBe('version 6\n');

        await git([...v, 'fetch', '-q', '--deepen=2'], dir);
        expect(await count(dir)).toBe(3);
        expect(shallowFile(dir)).toEqual([repo.commits[3]]);
        await fsck(dir);

        // A plain fetch of a shallow clone after the branch moved: the new commit only, the boundary kept.
        const work = newDir();
        await git(['clone', '-q', withToken(repo.project.http_url_to_repo, callers.owner.token!), work]);
        writeFileSync(join(work, 'file7.txt'), 'content 7\n');
        await git(['add', '.'], work);
        await git(['commit', '-q', '-m', 'Commit 7'], work);
        await git(['push', '-q', 'origin', 'master'], work);
        await git([...v, 'fetch', '-q', 'origin'], dir);
        expect(Number((await git(['rev-list', '--count', 'origin/master'], dir)).trim())).toBe(4);
        expect(shallowFile(dir)).toEqual([repo.commits[3]]);
        await fsck(dir);

        await git([...v, 'fetch', '-q', '--unshallow'], dir);
        expect(shallowFile(dir)).toEqual([]);
        expect(Number((await git(['rev-list', '--count', 'origin/master'], dir)).trim())).toBe(7);
        await fsck(dir);
      });

      it('--depth N from the wants, --shallow-since and --shallow-exclude', async () => {
        const repo = await history();
        const deep = newDir();
        await git([...v, 'clone', '-q', '--depth', '3', repo.project.http_url_to_repo, deep]);
        expect(await count(deep)).toBe(3);
        expect(shallowFile(deep)).toEqual([repo.commits[3]]);
        // A depth counted from the wants again (not --deepen): to 5.
        await git([...v, 'fetch', '-q', '--depth=5', 'origin'], deep);
        expect(await count(deep)).toBe(5);
        expect(shallowFile(deep)).toEqual([repo.commits[1]]);
        await fsck(deep);

        const since = newDir();
        await git([...v, 'clone', '-q', `--shallow-since=@${T0 + 4 * DAY}`, repo.project.http_url_to_repo, since]);
        expect((await git(['log', '--format=%s'], since)).trim().split('\n')).toEqual(['Commit 6', 'Commit 5', 'Commit 4']);
        expect(shallowFile(since)).toEqual([repo.commits[3]]);
        await fsck(since);

        const exclude = newDir();
        await git([...v, 'clone', '-q', '--shallow-exclude=old', repo.project.http_url_to_repo, exclude]);
        expect((await git(['log', '--format=%s'], exclude)).trim().split('\n')).toEqual(['Commit 6', 'Commit 5', 'Commit 4', 'Commit 3']);
        expect(shallowFile(exclude)).toEqual([repo.commits[2]]);
        await fsck(exclude);

        const none = await gitResult([...v, 'clone', '-q', `--shallow-since=@${T0 + 30 * DAY}`, repo.project.http_url_to_repo, newDir()], scratch);
        expect(none.code).not.toBe(0);
        expect(none.stderr).toContain('no commits selected for shallow requests');
      });
    });
  }
});

describe('the shallow lines on the wire', () => {
  let repo: Awaited<ReturnType<typeof history>>;
  const uploadPack = (body: Buffer, headers: Record<string, string> = {}) =>
    fetch(`${repo.project.http_url_to_repo}/git-upload-pack`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': 'application/x-git-upload-pack-request', ...headers } });
  beforeAll(async () => {
    repo = await history();
  });

  it('v0: a first request ending at the want list gets the shallow update alone; a deepen from a shallow client unshallows it', async () => {
    const tip = repo.commits[5]!;
    const first = await uploadPack(Buffer.concat([pktLine(`want ${tip} multi_ack_detailed side-band-64k ofs-delta\n`), pktLine('deepen 2\n'), FLUSH]));
    expect(first.status).toBe(200);
    expect(packetTexts(packetsOf(Buffer.from(await first.arrayBuffer())))).toEqual([`shallow ${repo.commits[4]}\n`, 'flush']);
    // The client has commit 6 shallow and asks for two more levels below it (deepen-relative).
    const relative = await uploadPack(
      Buffer.concat([pktLine(`want ${tip} multi_ack_detailed side-band-64k ofs-delta deepen-relative\n`), pktLine(`shallow ${tip}\n`), pktLine('deepen 2\n'), FLUSH, pktLine(`have ${tip}\n`), FLUSH]),
    );
    expect(packetTexts(packetsOf(Buffer.from(await relative.arrayBuffer())))).toEqual([`shallow ${repo.commits[3]}\n`, `unshallow ${tip}\n`, 'flush', `ACK ${tip} common\n`, 'NAK\n']);
  });

  it('v2: shallow-info before the packfile; deepen with deepen-not is refused with an ERR packet', async () => {
    const v2 = { 'git-protocol': 'version=2' };
    const request = (args: string[]) => Buffer.concat([pktLine('command=fetch\n'), pktLine('object-format=sha1\n'), DELIM, ...args.map((a) => pktLine(`${a}\n`)), FLUSH]);
    const res = await uploadPack(request([`want ${repo.commits[5]}`, 'deepen 1', 'no-progress', 'done']), v2);
    const texts = packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())));
    expect(texts.slice(0, 4)).toEqual(['shallow-info\n', `shallow ${repo.commits[5]}\n`, 'delim', 'packfile\n']);
    // A shallow client without deepen: an empty section.
    const plain = packetTexts(packetsOf(Buffer.from(await (await uploadPack(request([`want ${repo.commits[5]}`, `shallow ${repo.commits[4]}`, 'no-progress', 'done']), v2)).arrayBuffer())));
    expect(plain.slice(0, 3)).toEqual(['shallow-info\n', 'delim', 'packfile\n']);
    const refused = await uploadPack(request([`want ${repo.commits[5]}`, 'deepen 1', 'deepen-not old', 'done']), v2);
    expect(packetTexts(packetsOf(Buffer.from(await refused.arrayBuffer())))).toEqual(['ERR git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together\n']);
    const ambiguous = await uploadPack(request([`want ${repo.commits[5]}`, 'deepen-not nothing', 'done']), v2);
    expect(packetTexts(packetsOf(Buffer.from(await ambiguous.arrayBuffer())))).toEqual(['ERR git upload-pack: ambiguous deepen-not: deepen-not nothing\n']);
  });
});

describe('who may clone shallow (a private project)', () => {
  const table: [Role, boolean][] = [
    ['anonymous', false],
    ['nonMember', false],
    ['guest', false],
    ['reporter', true],
    ['developer', true],
    ['admin', true],
  ];
  let repo: Awaited<ReturnType<typeof history>>;
  beforeAll(async () => {
    repo = await history('private');
  });
  for (const [role, may] of table) {
    it(`as ${role}`, async () => {
      const token = callers[role].token;
      const url = token ? withToken(repo.project.http_url_to_repo, token) : repo.project.http_url_to_repo;
      const dir = newDir();
      const cloned = await gitResult(['clone', '-q', '--depth', '1', url, dir], scratch);
      expect(cloned.code === 0, cloned.stderr).toBe(may);
      if (may) expect(await count(dir)).toBe(1);
      const info = await fetch(`${repo.project.http_url_to_repo}/info/refs?service=git-upload-pack`, { headers: token ? basicAuth(token) : {} });
      expect(info.status).toBe(may ? 200 : token ? (role === 'guest' ? 403 : 404) : 401);
    });
  }
});
