import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedIndexOf } from '../../src/commands/kernel/aggregates.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { groupsProjector } from '../../src/projections/groups/projector.js';
import { projectsProjector } from '../../src/projections/projects/projector.js';
import { usersProjector } from '../../src/projections/users.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

// GitLab 12: Avatarable (app/models/concerns/avatarable.rb) on users, groups and projects;
// AvatarUploader stores under uploads/-/system/<model>/avatar/<id>/<filename>, which
// UploadsController serves (users to anyone, groups and projects to who may read them).

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** A PNG padded with bytes after its end: `n` distinct images of the same look. */
const png = (n: number, size = PNG.length + 8) => Buffer.concat([PNG, Buffer.alloc(size - PNG.length, n % 256), Buffer.from(String(n))]);
/** The start of a JFIF JPEG (what the type check reads). */
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(64, 7)]);

const FORMATS = 'file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico';
const TOO_BIG = 'is too big (should be at most 200 KB)';

let api: TestServer;
let suffix = 0;
const unique = (base: string) => `${base}${++suffix}x${process.pid}`;

/** A multipart request, as python-gitlab and gitbeaker send files. */
async function multipart(method: string, path: string, fields: Record<string, string | { bytes: Buffer; filename: string; type?: string }>, token: string | null = api.rootToken) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value.bytes], { type: value.type ?? 'application/octet-stream' }), value.filename);
  }
  const headers: Record<string, string> = token === null ? {} : { 'PRIVATE-TOKEN': token };
  const response = await fetch(`${api.apiUrl}${path}`, { method, body: form, headers });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, body, text };
}

/** GET of an avatar URL as a browser would (no token), or with one. */
async function download(url: string, token?: string) {
  const response = await fetch(url, { headers: token ? { 'PRIVATE-TOKEN': token } : {} });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), type: response.headers.get('content-type'), headers: response.headers };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const uploadCount = async () => Number((await api.handle.db.selectFrom('uploads' as never).select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow() as { n: string | number }).n);
const userFields = (username: string) => ({ email: `${username}@example.com`, username, name: `User ${username}`, password: 'password123', skip_confirmation: 'true' });

beforeAll(async () => {
  api = await startTestServer();
});

afterAll(async () => {
  await api?.close();
});

describe('POST /users', () => {
  it('stores the avatar and serves it at avatar_url, to anyone', async () => {
    const bytes = png(1);
    const res = await multipart('POST', '/users', { ...userFields(unique('ava')), avatar: { bytes, filename: 'dk.png', type: 'image/png' } });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBe(`${api.url}/uploads/-/system/user/avatar/${res.body.id}/dk.png`);

    const shown = await api.get(`/users/${res.body.id}`);
    expect(shown.body.avatar_url).toBe(res.body.avatar_url);

    const served = await download(res.body.avatar_url);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/png');
    expect(served.bytes.equals(bytes)).toBe(true);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    // Rails' routes answer another method with 404, not Grape's 405; an unknown model is no route either.
    expect((await fetch(res.body.avatar_url, { method: 'POST' })).status).toBe(404);
    expect((await download(res.body.avatar_url.replace('/user/', '/note/'))).status).toBe(404);
  });

  it('records the upload by hash, size and filename in the event, never its bytes', async () => {
    const bytes = png(2);
    const res = await multipart('POST', '/users', { ...userFields(unique('ev')), avatar: { bytes, filename: 'me.png' } });
    expect(res.status).toBe(201);
    const events = await api.events(`user-${res.body.id}`);
    const changed = events.find((e) => e.type === 'UserAvatarChanged');
    expect(changed?.data).toEqual({ id: res.body.id, avatar: { sha256: sha256(bytes), size: bytes.length, filename: 'me.png' } });
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(bytes.toString('base64'));
    expect(logged).not.toContain(bytes.toString('hex'));
  });

  it('without an avatar keeps the Gravatar', async () => {
    const res = await multipart('POST', '/users', userFields(unique('plain')));
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\//);
  });

  it.each([
    ['a file past 200 KB', { bytes: png(3, 201 * 1024), filename: 'big.png' }, [TOO_BIG]],
    ['a text file', { bytes: Buffer.from('hello'), filename: 'notes.txt' }, [FORMATS]],
    ['a text file named .png', { bytes: Buffer.from('not an image at all'), filename: 'x.png' }, [FORMATS]],
    ['a big text file', { bytes: Buffer.alloc(300 * 1024, 65), filename: 'big.txt' }, [FORMATS, TOO_BIG]],
  ])('refuses %s with 400 and writes nothing', async (_what, avatar, messages) => {
    const username = unique('bad');
    const before = await uploadCount();
    const res = await multipart('POST', '/users', { ...userFields(username), avatar });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { avatar: messages } });
    expect((await api.get('/users', { query: { username } })).body).toEqual([]);
    expect(await uploadCount()).toBe(before);
  });

  it('refuses an avatar that is no file: 400 avatar is invalid', async () => {
    const res = await api.post('/users', { ...userFields(unique('str')), avatar: 'https://example.com/me.png' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'avatar is invalid' });
  });

  it('stores nothing when the user is refused (taken username)', async () => {
    const username = unique('taken');
    expect((await multipart('POST', '/users', userFields(username))).status).toBe(201);
    const before = await uploadCount();
    const res = await multipart('POST', '/users', { ...userFields(username), email: `${unique('other')}@example.com`, avatar: { bytes: png(4), filename: 'a.png' } });
    expect(res.status).toBe(409);
    expect(await uploadCount()).toBe(before);
  });

  it('is refused to a non-administrator before the file is looked at', async () => {
    const { token } = await api.createUser({ username: unique('plainuser') });
    const before = await uploadCount();
    const res = await multipart('POST', '/users', { ...userFields(unique('nope')), avatar: { bytes: Buffer.from('junk'), filename: 'x.txt' } }, token);
    expect(res.status).toBe(403);
    expect(await uploadCount()).toBe(before);
  });
});

describe('PUT /users/:id', () => {
  it('replaces the avatar; the old URL is gone, the new one serves the new bytes', async () => {
    const created = await multipart('POST', '/users', { ...userFields(unique('put')), avatar: { bytes: png(5), filename: 'first.png' } });
    const id = created.body.id as number;
    const res = await multipart('PUT', `/users/${id}`, { avatar: { bytes: JPEG, filename: 'second.jpg', type: 'image/jpeg' } });
    expect(res.status).toBe(200);
    expect(res.body.avatar_url).toBe(`${api.url}/uploads/-/system/user/avatar/${id}/second.jpg`);
    const served = await download(res.body.avatar_url);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/jpeg');
    expect(served.bytes.equals(JPEG)).toBe(true);
    expect((await download(created.body.avatar_url)).status).toBe(404);
  });

  it('sanitizes the filename as CarrierWave does', async () => {
    const created = await multipart('POST', '/users', userFields(unique('san')));
    const res = await multipart('PUT', `/users/${created.body.id}`, { avatar: { bytes: png(6), filename: 'my face (1).PNG' } });
    expect(res.status).toBe(200);
    expect(res.body.avatar_url).toBe(`${api.url}/uploads/-/system/user/avatar/${created.body.id}/my_face__1_.PNG`);
    expect((await download(res.body.avatar_url)).status).toBe(200);
  });

  it('refuses a bad avatar with 400 and keeps the old one', async () => {
    const created = await multipart('POST', '/users', { ...userFields(unique('keep')), avatar: { bytes: png(7), filename: 'keep.png' } });
    const res = await multipart('PUT', `/users/${created.body.id}`, { bio: 'changed', avatar: { bytes: Buffer.from('<html>'), filename: 'page.html' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { avatar: [FORMATS] } });
    const shown = await api.get(`/users/${created.body.id}`);
    expect(shown.body.avatar_url).toBe(created.body.avatar_url);
    expect(shown.body.bio).toBe('');
  });

  it('answers 404 for an unknown user, even with a bad file', async () => {
    const res = await multipart('PUT', '/users/999999', { avatar: { bytes: Buffer.from('x'), filename: 'x.txt' } });
    expect(res.status).toBe(404);
  });
});

describe('GET /uploads/-/system/:model/avatar/:id/:filename', () => {
  it('answers 404 for a user without that avatar and an unknown model', async () => {
    const created = await multipart('POST', '/users', userFields(unique('none')));
    expect((await download(`${api.url}/uploads/-/system/user/avatar/${created.body.id}/dk.png`)).status).toBe(404);
    expect((await download(`${api.url}/uploads/-/system/user/avatar/999999/dk.png`)).status).toBe(404);
    expect((await download(`${api.url}/uploads/-/system/snippet/avatar/1/dk.png`)).status).toBe(404);
    expect((await download(`${api.url}/uploads/-/system/user/avatar/1x/dk.png`)).status).toBe(404);
    expect((await download(`${api.url}/uploads/-/system/user/avatar/99999999999/dk.png`)).status).toBe(404);
  });
});

describe('POST /groups and PUT /groups/:id', () => {
  it('stores, serves and replaces a group avatar', async () => {
    const path = unique('ag');
    const bytes = png(8);
    const res = await multipart('POST', '/groups', { name: path, path, visibility: 'public', avatar: { bytes, filename: 'group.png' } });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBe(`${api.url}/uploads/-/system/group/avatar/${res.body.id}/group.png`);
    expect((await api.get(`/groups/${res.body.id}`)).body.avatar_url).toBe(res.body.avatar_url);
    const served = await download(res.body.avatar_url);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(bytes)).toBe(true);

    const events = await api.events(`group-${res.body.id}`);
    expect(events.find((e) => e.type === 'GroupAvatarChanged')?.data).toEqual({ id: res.body.id, avatar: { sha256: sha256(bytes), size: bytes.length, filename: 'group.png' } });

    const updated = await multipart('PUT', `/groups/${res.body.id}`, { avatar: { bytes: JPEG, filename: 'new.jpeg' } });
    expect(updated.status).toBe(200);
    expect(updated.body.avatar_url).toBe(`${api.url}/uploads/-/system/group/avatar/${res.body.id}/new.jpeg`);
    expect((await download(updated.body.avatar_url)).bytes.equals(JPEG)).toBe(true);
  });

  it('refuses a bad group avatar with 400 and creates no group', async () => {
    const path = unique('bg');
    const res = await multipart('POST', '/groups', { name: path, path, avatar: { bytes: png(9, 201 * 1024), filename: 'big.pdf' } });
    expect(res.status).toBe(400);
    // GitLab: POST /groups answers render_api_error!("Failed to save group #{group.errors.messages}", 400).
    expect(res.body).toEqual({ message: `Failed to save group {:avatar=>["${FORMATS}", "${TOO_BIG}"]}` });
    expect((await api.get(`/groups/${path}`)).status).toBe(404);
  });

  it("serves a private group's avatar to its members only (404 to others)", async () => {
    const member = await api.createUser({ username: unique('gm') });
    const stranger = await api.createUser({ username: unique('gs') });
    const path = unique('pg');
    const res = await multipart('POST', '/groups', { name: path, path, visibility: 'private', avatar: { bytes: png(10), filename: 'p.png' } }, member.token);
    expect(res.status).toBe(201);
    expect((await download(res.body.avatar_url, member.token)).status).toBe(200);
    expect((await download(res.body.avatar_url, stranger.token)).status).toBe(404);
    expect((await download(res.body.avatar_url)).status).toBe(404);
  });

  it('is refused to a developer (403) before the file is looked at', async () => {
    const owner = await api.createUser({ username: unique('go') });
    const developer = await api.createUser({ username: unique('gd') });
    const path = unique('dg');
    const group = await api.post('/groups', { name: path, path, visibility: 'public' }, { token: owner.token });
    await api.post(`/groups/${group.body.id}/members`, { user_id: developer.user.id, access_level: 30 }, { token: owner.token });
    const before = await uploadCount();
    const res = await multipart('PUT', `/groups/${group.body.id}`, { avatar: { bytes: png(11), filename: 'd.png' } }, developer.token);
    expect(res.status).toBe(403);
    expect(await uploadCount()).toBe(before);
  });
});

describe('POST /projects and PUT /projects/:id', () => {
  it('stores, serves and replaces a project avatar', async () => {
    const path = unique('ap');
    const bytes = png(12);
    const res = await multipart('POST', '/projects', { name: path, visibility: 'public', avatar: { bytes, filename: 'project.png' } });
    expect(res.status).toBe(201);
    expect(res.body.avatar_url).toBe(`${api.url}/uploads/-/system/project/avatar/${res.body.id}/project.png`);
    expect((await api.get(`/projects/${res.body.id}`)).body.avatar_url).toBe(res.body.avatar_url);
    const served = await download(res.body.avatar_url);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(bytes)).toBe(true);
    const events = await api.events(`project-${res.body.id}`);
    expect(events.find((e) => e.type === 'ProjectAvatarChanged')?.data).toEqual({ id: res.body.id, avatar: { sha256: sha256(bytes), size: bytes.length, filename: 'project.png' } });

    const updated = await multipart('PUT', `/projects/${res.body.id}`, { avatar: { bytes: JPEG, filename: 'p.jpg' } });
    expect(updated.status).toBe(200);
    expect(updated.body.avatar_url).toBe(`${api.url}/uploads/-/system/project/avatar/${res.body.id}/p.jpg`);
    expect((await download(updated.body.avatar_url)).bytes.equals(JPEG)).toBe(true);
    expect((await download(res.body.avatar_url)).status).toBe(404);
  });

  it('refuses a bad avatar on creation as a validation error (400)', async () => {
    const path = unique('cp');
    const res = await multipart('POST', '/projects', { name: path, avatar: { bytes: png(14, 201 * 1024), filename: 'big.png' } });
    expect(res.status).toBe(400);
    // GitLab: render_validation_error!(project), whose hash shows the limit_reached key the endpoint read.
    expect(res.body).toEqual({ message: { avatar: [TOO_BIG], limit_reached: [] } });
    expect((await api.get(`/projects/${encodeURIComponent(`root/${path}`)}`)).status).toBe(404);
  });

  it('refuses a bad project avatar with 400 and changes nothing', async () => {
    const path = unique('bp');
    const created = await api.post('/projects', { name: path });
    const res = await multipart('PUT', `/projects/${created.body.id}`, { description: 'new', avatar: { bytes: Buffer.from('text'), filename: 'a.txt' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { avatar: [FORMATS] } });
    const shown = await api.get(`/projects/${created.body.id}`);
    expect(shown.body.avatar_url).toBeNull();
    expect(shown.body.description).toBeNull();
  });

  it("serves a private project's avatar to its members only (404 to others)", async () => {
    const owner = await api.createUser({ username: unique('po') });
    const stranger = await api.createUser({ username: unique('ps') });
    const res = await multipart('POST', '/projects', { name: unique('pp'), visibility: 'private', avatar: { bytes: png(13), filename: 'x.png' } }, owner.token);
    expect(res.status).toBe(201);
    expect((await download(res.body.avatar_url, owner.token)).status).toBe(200);
    expect((await download(res.body.avatar_url, stranger.token)).status).toBe(404);
    expect((await download(res.body.avatar_url)).status).toBe(404);
  });
});

describe('the log and the uploads', () => {
  /** A user, a group and a project, each with an avatar of its own. */
  async function threeAvatars(n: number) {
    const bytes = { user: png(n), group: png(n + 1), project: png(n + 2) };
    const user = await multipart('POST', '/users', { ...userFields(unique('rb')), avatar: { bytes: bytes.user, filename: 'replay.png' } });
    const path = unique('rg');
    const group = await multipart('POST', '/groups', { name: path, path, visibility: 'private', avatar: { bytes: bytes.group, filename: 'g.png' } });
    const project = await multipart('POST', '/projects', { name: unique('rp'), visibility: 'private', avatar: { bytes: bytes.project, filename: 'p.png' } });
    for (const res of [user, group, project]) expect(res.status).toBe(201);
    return { bytes, user: user.body, group: group.body, project: project.body };
  }

  /** The hash each read row holds, as the projectors wrote it. */
  async function projectedHashes(ids: { user: number; group: number; project: number }) {
    const db = api.handle.db;
    const user = await db.selectFrom('users').select('avatar_sha256').where('id', '=', ids.user).executeTakeFirst();
    const group = await db.selectFrom('namespaces').select('avatar_sha256').where('id', '=', ids.group).executeTakeFirst();
    const project = await db.selectFrom('projects').select('avatar_sha256').where('id', '=', ids.project).executeTakeFirst();
    return { user: user?.avatar_sha256, group: group?.avatar_sha256, project: project?.avatar_sha256 };
  }

  /**
   * The statements that read the event log while `run` runs, other than the log's followers
   * (the in-process projection worker and sealer read it after a checkpoint, in gap-free order).
   */
  async function logReadsDuring(run: () => Promise<void>): Promise<string[]> {
    const executor = Object.getPrototypeOf(api.handle.db.getExecutor()) as { executeQuery: (query: { sql: string }) => Promise<unknown> };
    const original = executor.executeQuery;
    const reads: string[] = [];
    executor.executeQuery = function (this: unknown, query: { sql: string }) {
      // The followers' reads of the log's tail, and the sealer's look-up of where the log tree ends, run beside the requests.
      const follower = /pg_snapshot_xmin|\(\s*"?transaction_id"?\s*,\s*"?global_position"?\s*\)\s*>|^select "transaction_id" from "events" where "global_position" = \$1$/.test(query.sql);
      if (/\b(from|join)\s+"?events"?(\s|$)/i.test(query.sql) && !follower) reads.push(query.sql);
      return original.call(this, query);
    };
    try {
      await run();
    } finally {
      executor.executeQuery = original;
    }
    return reads;
  }

  it("projects each avatar's hash onto the row the route reads, and serves it without reading the log", async () => {
    const { bytes, user, group, project } = await threeAvatars(20);
    expect(await projectedHashes({ user: user.id, group: group.id, project: project.id })).toEqual({
      user: sha256(bytes.user),
      group: sha256(bytes.group),
      project: sha256(bytes.project),
    });
    const served: Buffer[] = [];
    const reads = await logReadsDuring(async () => {
      for (const url of [user.avatar_url, group.avatar_url, project.avatar_url]) {
        const res = await download(url, api.rootToken);
        expect(res.status).toBe(200);
        served.push(res.bytes);
      }
    });
    expect(reads).toEqual([]);
    expect(served.map((b) => b.toString('hex'))).toEqual([bytes.user, bytes.group, bytes.project].map((b) => b.toString('hex')));

    // A replaced avatar's row holds the new hash.
    const replaced = await multipart('PUT', `/projects/${project.id}`, { avatar: { bytes: JPEG, filename: 'n.jpg' } });
    expect(replaced.status).toBe(200);
    expect((await projectedHashes({ user: user.id, group: group.id, project: project.id })).project).toBe(sha256(JPEG));
  });

  it('never shows the stored hash in the API (users, groups, projects)', async () => {
    const { bytes, user, group, project } = await threeAvatars(30);
    const { token } = await api.createUser({ username: unique('viewer') });
    for (const [path, hash] of [
      [`/users/${user.id}`, sha256(bytes.user)],
      [`/users?username=${user.username}`, sha256(bytes.user)],
      [`/groups/${group.id}`, sha256(bytes.group)],
      ['/groups', sha256(bytes.group)],
      [`/projects/${project.id}`, sha256(bytes.project)],
      ['/projects', sha256(bytes.project)],
    ] as const) {
      const res = await api.get(path);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toContain('avatar_url');
      expect(res.text, path).not.toContain('avatar_sha256');
      expect(res.text, path).not.toContain(hash);
    }
    const own = await api.get('/user', { token });
    expect(own.text).not.toContain('avatar_sha256');
  });

  it('rebuilds the same avatar rows from the log, verifies, and still serves the avatars', async () => {
    const { bytes, user, group, project } = await threeAvatars(15);
    await expectReplayEquivalence(api.handle, [usersProjector, groupsProjector, projectsProjector]);
    expect(await verifyLog(api.handle.db, { feedIndex: feedIndexOf })).toMatchObject({ ok: true });
    // The rebuilt rows carry the hashes (both paths agreeing on nulls would pass the equivalence).
    expect(await projectedHashes({ user: user.id, group: group.id, project: project.id })).toEqual({
      user: sha256(bytes.user),
      group: sha256(bytes.group),
      project: sha256(bytes.project),
    });
    expect((await download(user.avatar_url)).bytes.equals(bytes.user)).toBe(true);
    expect((await download(group.avatar_url, api.rootToken)).bytes.equals(bytes.group)).toBe(true);
    expect((await download(project.avatar_url, api.rootToken)).bytes.equals(bytes.project)).toBe(true);
  });
});
