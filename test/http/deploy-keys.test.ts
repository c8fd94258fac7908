import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployKeysProjector } from '../../src/projections/deploy-keys/projector.js';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';

let api: TestServer;
/** Maintainer of the projects made by `fresh` (the group's owner). */
let mia: { user: any; token: string };
/** A maintainer of other projects only. */
let otto: { user: any; token: string };

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  [mia, otto] = await Promise.all([api.createUser(), api.createUser()]);
});
afterAll(() => api.close());

/** A fresh private project in a group `owner` owns. */
async function fresh(owner = mia) {
  const group = await createGroup(api, { token: owner.token });
  return createProject(api, { token: owner.token, group });
}

const KEYS = ['id', 'title', 'key', 'created_at', 'can_push'];

async function addKey(projectId: number, body: Record<string, unknown>, token = mia.token) {
  const res = await api.post(`/projects/${projectId}/deploy_keys`, body, { token });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('POST /projects/:id/deploy_keys', () => {
  it('creates a key enabled in the project (Entities::DeployKeysProject)', async () => {
    const project = await fresh();
    const key = sshPublicKey('ed25519', 'ci@example.com');
    const res = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'CI', key: `  ${key}\n` }, { token: mia.token });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(KEYS);
    expect(res.body).toMatchObject({ title: 'CI', key, can_push: false });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const listed = await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token });
    expect(listed.body).toEqual([res.body]);
    expect((await api.get(`/projects/${project.id}/deploy_keys/${res.body.id}`, { token: mia.token })).body).toEqual(res.body);
    const events = await api.events(`deploy-key-${res.body.id}`);
    expect(events.map((e) => e.type)).toEqual(['DeployKeyCreated', 'DeployKeyLinked']);
    expect(events[0]!.data.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
  });

  it('takes can_push, and each supported key type', async () => {
    const project = await fresh();
    for (const kind of ['rsa2048', 'dsa', 'ecdsa256', 'ecdsa521'] as const) {
      const body = await addKey(project.id, { title: kind, key: sshPublicKey(kind), can_push: true });
      expect(body.can_push).toBe(true);
    }
    expect((await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token })).body.map((k: any) => k.title)).toEqual(['rsa2048', 'dsa', 'ecdsa256', 'ecdsa521']);
  });

  it('keeps the first word of the comment and joins a broken key (Gitlab::SSHPublicKey.sanitize)', async () => {
    const project = await fresh();
    const [type, blob] = sshPublicKey('ed25519').split(' ') as [string, string];
    const body = await addKey(project.id, { title: 'pasted', key: `${type} ${blob.slice(0, 30)}\n${blob.slice(30)} me@host and more` });
    expect(body.key).toBe(`${type} ${blob} me@host`);
  });

  it("answers Grape's errors for missing parameters", async () => {
    const project = await fresh();
    const res = await api.post(`/projects/${project.id}/deploy_keys`, {}, { token: mia.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'key is missing, title is missing' });
    const bad = await api.post(`/projects/${project.id}/deploy_keys`, { key: 'k', title: 't', can_push: 'maybe' }, { token: mia.token });
    expect(bad.body).toEqual({ error: 'can_push is invalid' });
  });

  it("answers an invalid key with GitLab's nested validation errors, and creates nothing", async () => {
    const project = await fresh();
    const res = await api.post(`/projects/${project.id}/deploy_keys`, { title: '', key: 'some key' }, { token: mia.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: {
        'deploy_key.title': ["can't be blank"],
        'deploy_key.key': ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
        'deploy_key.fingerprint': ['cannot be generated'],
      },
    });
    const truncated = await api.post(`/projects/${project.id}/deploy_keys`, { title: 't', key: sshPublicKey('rsa2048').slice(0, 200) }, { token: mia.token });
    expect(truncated.body).toEqual({ message: { 'deploy_key.fingerprint': ['cannot be generated'], 'deploy_key.key': ['type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'] } });
    expect((await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token })).body).toEqual([]);
  });

  it('answers the same key text in the same project with the key as it is', async () => {
    const project = await fresh();
    const key = sshPublicKey();
    const first = await addKey(project.id, { title: 'one', key });
    const again = await addKey(project.id, { title: 'two', key, can_push: true });
    expect(again).toEqual(first);
    expect(await api.events(`deploy-key-${first.id}`)).toHaveLength(2);
  });

  it("enables a key of another of the caller's projects, with this project's can_push", async () => {
    const [a, b] = [await fresh(), await fresh()];
    const key = sshPublicKey();
    const first = await addKey(a.id, { title: 'shared', key });
    const joined = await addKey(b.id, { title: 'ignored', key, can_push: true });
    expect(joined).toEqual({ ...first, can_push: true });
    const all = await api.get('/deploy_keys');
    expect(all.body.filter((k: any) => k.key === key)).toHaveLength(1);
  });

  it('refuses a key of a project the caller cannot access: the fingerprint is taken', async () => {
    const [mine, others] = [await fresh(), await fresh(otto)];
    const key = sshPublicKey();
    await addKey(mine.id, { title: 'mine', key });
    const res = await api.post(`/projects/${others.id}/deploy_keys`, { title: 'theirs', key }, { token: otto.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: { 'deploy_key.fingerprint': ['has already been taken'] } });
    // The same key with another comment is another text, but the same fingerprint.
    const [type, blob] = key.split(' ');
    const commented = await api.post(`/projects/${mine.id}/deploy_keys`, { title: 'again', key: `${type} ${blob} other` }, { token: mia.token });
    expect(commented.body).toEqual({ message: { 'deploy_key.fingerprint': ['has already been taken'] } });
  });
});

describe('GET /projects/:id/deploy_keys/:key_id', () => {
  it("answers 404 Not found for a key not enabled in the project, and Grape's error for a bad id", async () => {
    const [a, b] = [await fresh(), await fresh()];
    const key = await addKey(a.id, { title: 'a', key: sshPublicKey() });
    expect(await api.get(`/projects/${b.id}/deploy_keys/${key.id}`, { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`/projects/${a.id}/deploy_keys/99999999999`, { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`/projects/${a.id}/deploy_keys/abc`, { token: mia.token })).toMatchObject({ status: 400, body: { error: 'key_id is invalid' } });
  });
});

describe('GET /projects/:id/deploy_keys', () => {
  it('pages the keys in the order they were enabled', async () => {
    const project = await fresh();
    for (const title of ['k1', 'k2', 'k3']) await addKey(project.id, { title, key: sshPublicKey() });
    const res = await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token, query: { per_page: 2, page: 2 } });
    expect(res.body.map((k: any) => k.title)).toEqual(['k3']);
    expect(res.headers.get('x-total')).toBe('3');
  });
});

describe('PUT /projects/:id/deploy_keys/:key_id', () => {
  it('changes the title and can_push', async () => {
    const project = await fresh();
    const key = await addKey(project.id, { title: 'old', key: sshPublicKey() });
    const res = await api.put(`/projects/${project.id}/deploy_keys/${key.id}`, { title: 'new', can_push: true }, { token: mia.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...key, title: 'new', can_push: true });
    expect((await api.get(`/projects/${project.id}/deploy_keys/${key.id}`, { token: mia.token })).body).toEqual(res.body);
    const only = await api.put(`/projects/${project.id}/deploy_keys/${key.id}`, { can_push: false }, { token: mia.token });
    expect(only.body).toEqual({ ...key, title: 'new', can_push: false });
  });

  it("answers Grape's, the model's and the lookup's errors", async () => {
    const project = await fresh();
    const key = await addKey(project.id, { title: 'old', key: sshPublicKey() });
    const path = `/projects/${project.id}/deploy_keys/${key.id}`;
    expect((await api.put(path, {}, { token: mia.token })).body).toEqual({ error: 'title, can_push are missing, at least one parameter must be provided' });
    expect(await api.put(path, { title: '' }, { token: mia.token })).toMatchObject({ status: 400, body: { message: { 'deploy_key.title': ["can't be blank"] } } });
    expect(await api.put(`/projects/${project.id}/deploy_keys/0`, { title: 'x' }, { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await api.get(path, { token: mia.token })).body.title).toBe('old');
  });
});

describe('DELETE /projects/:id/deploy_keys/:key_id', () => {
  it('deletes a key used only here', async () => {
    const project = await fresh();
    const key = await addKey(project.id, { title: 'gone', key: sshPublicKey() });
    expect((await api.del(`/projects/${project.id}/deploy_keys/${key.id}`, { token: mia.token })).status).toBe(204);
    expect((await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token })).body).toEqual([]);
    expect((await api.get('/deploy_keys', { query: { per_page: 100 } })).body.map((k: any) => k.id)).not.toContain(key.id);
    expect((await api.events(`deploy-key-${key.id}`)).map((e) => e.type).slice(-2)).toEqual(['DeployKeyUnlinked', 'DeployKeyDeleted']);
    // Its fingerprint is free again.
    await addKey(project.id, { title: 'back', key: key.key });
  });

  it('keeps a key enabled in another project', async () => {
    const [a, b] = [await fresh(), await fresh()];
    const key = await addKey(a.id, { title: 'shared', key: sshPublicKey() });
    await addKey(b.id, { title: 'shared', key: key.key });
    expect((await api.del(`/projects/${a.id}/deploy_keys/${key.id}`, { token: mia.token })).status).toBe(204);
    expect((await api.get(`/projects/${b.id}/deploy_keys/${key.id}`, { token: mia.token })).status).toBe(200);
  });

  it('answers 404 Deploy Key Not Found, and 412 after If-Unmodified-Since', async () => {
    const project = await fresh();
    expect(await api.del(`/projects/${project.id}/deploy_keys/12345`, { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Deploy Key Not Found' } });
    const key = await addKey(project.id, { title: 'kept', key: sshPublicKey() });
    const res = await api.del(`/projects/${project.id}/deploy_keys/${key.id}`, { token: mia.token, headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    expect(res.status).toBe(412);
    expect((await api.get(`/projects/${project.id}/deploy_keys/${key.id}`, { token: mia.token })).status).toBe(200);
  });
});

describe('POST /projects/:id/deploy_keys/:key_id/enable', () => {
  it("enables a key of the caller's other project: 201 with Entities::SSHKey", async () => {
    const [a, b] = [await fresh(), await fresh()];
    const key = await addKey(a.id, { title: 'shared', key: sshPublicKey() });
    const res = await api.post(`/projects/${b.id}/deploy_keys/${key.id}/enable`, undefined, { token: mia.token });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: key.id, title: 'shared', key: key.key, created_at: key.created_at });
    expect((await api.get(`/projects/${b.id}/deploy_keys/${key.id}`, { token: mia.token })).body).toEqual({ ...key, can_push: false });
    // Enabled already: the same answer, nothing appended.
    const events = (await api.events(`deploy-key-${key.id}`)).length;
    expect((await api.post(`/projects/${b.id}/deploy_keys/${key.id}/enable`, undefined, { token: mia.token })).status).toBe(201);
    expect(await api.events(`deploy-key-${key.id}`)).toHaveLength(events);
  });

  it('answers 404 Deploy Key Not Found for a key of a project the caller is no member of; administrators enable any', async () => {
    const [theirs, mine] = [await fresh(otto), await fresh()];
    const key = await addKey(theirs.id, { title: 'otto', key: sshPublicKey() }, otto.token);
    expect(await api.post(`/projects/${mine.id}/deploy_keys/${key.id}/enable`, undefined, { token: mia.token })).toMatchObject({
      status: 404,
      body: { message: '404 Deploy Key Not Found' },
    });
    expect((await api.post(`/projects/${mine.id}/deploy_keys/${key.id}/enable`)).status).toBe(201);
    expect((await api.post(`/projects/${mine.id}/deploy_keys/424242/enable`)).status).toBe(404);
  });
});

describe('GET /deploy_keys', () => {
  it('lists every key for administrators (Entities::SSHKey), by id', async () => {
    const project = await fresh();
    const key = await addKey(project.id, { title: 'listed', key: sshPublicKey() });
    const res = await api.get('/deploy_keys', { query: { per_page: 100 } });
    expect(res.status).toBe(200);
    const ids = res.body.map((k: any) => k.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    expect(res.body.find((k: any) => k.id === key.id)).toEqual({ id: key.id, title: 'listed', key: key.key, created_at: key.created_at });
  });

  it('is 403 for others and 401 for anonymous', async () => {
    expect((await api.get('/deploy_keys', { token: mia.token })).status).toBe(403);
    expect((await api.get('/deploy_keys', { token: null })).status).toBe(401);
  });
});

describe('a deleted project', () => {
  it('takes its links along; the keys stay', async () => {
    const [a, b] = [await fresh(), await fresh()];
    const key = await addKey(a.id, { title: 'survivor', key: sshPublicKey() });
    await addKey(b.id, { title: 'survivor', key: key.key });
    expect((await api.del(`/projects/${a.id}`, { token: mia.token })).status).toBe(202);
    // The removal finishes in the background (GitLab's ProjectDestroyWorker).
    const removed = async () => (await api.events(`project-${a.id}`)).some((e) => e.type === 'ProjectDeleted');
    for (let i = 0; i < 400 && !(await removed()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await removed()).toBe(true);
    expect((await api.get('/deploy_keys', { query: { per_page: 100 } })).body.map((k: any) => k.id)).toContain(key.id);
    // The last live project's link deletes the key: the deleted project's link does not count.
    expect((await api.del(`/projects/${b.id}/deploy_keys/${key.id}`, { token: mia.token })).status).toBe(204);
    expect((await api.get('/deploy_keys', { query: { per_page: 100 } })).body.map((k: any) => k.id)).not.toContain(key.id);
  });
});

it('rebuilds the same tables from the log', async () => {
  await addMember(api, 'projects', (await fresh()).id, otto.user.id, 30);
  await expectReplayEquivalence(api.handle, [deployKeysProjector]);
});

describe("the instance's key restrictions (application settings)", () => {
  it('refuses a key type the settings forbid or a key below their minimum size, and takes it again once lifted', async () => {
    const project = await fresh();
    const restrict = (settings: Record<string, number>) => api.put('/application/settings', settings);
    expect((await restrict({ rsa_key_restriction: 2048, ed25519_key_restriction: -1 })).status).toBe(200);
    try {
      const small = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'small', key: sshPublicKey('rsa1024') }, { token: mia.token });
      expect(small).toMatchObject({ status: 400, body: { message: { 'deploy_key.key': ['must be at least 2048 bits'] } } });
      const forbidden = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'ed', key: sshPublicKey('ed25519') }, { token: mia.token });
      expect(forbidden).toMatchObject({ status: 400, body: { message: { 'deploy_key.key': ['type is forbidden. Must be RSA, DSA, or ECDSA'] } } });
      await addKey(project.id, { title: 'big enough', key: sshPublicKey('rsa2048') });
    } finally {
      expect((await restrict({ rsa_key_restriction: 0, ed25519_key_restriction: 0 })).status).toBe(200);
    }
    await addKey(project.id, { title: 'ed again', key: sshPublicKey('ed25519') });
    expect((await api.get(`/projects/${project.id}/deploy_keys`, { token: mia.token })).body.map((k: any) => k.title)).toEqual(['big enough', 'ed again']);
  });
});

/**
 * Who may manage a project's deploy keys (GitLab: `authenticate!`, then
 * `authorize_admin_project` — maintainers, owners and administrators; a project the caller
 * cannot see is 404, never 403), and who may list every key (administrators).
 */
describe('permissions', () => {
  type Visibility = 'private' | 'public';

  const BELOW_MAINTAINER = { guest: 403, reporter: 403, developer: 403 } as const;

  // prettier-ignore
  const TABLE: MatrixTable<Role, Visibility> = {
    'GET /projects/:id/deploy_keys':                    { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
    'GET /projects/:id/deploy_keys/:key_id':            { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
    'POST /projects/:id/deploy_keys':                   { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 201 } },
    'PUT /projects/:id/deploy_keys/:key_id':            { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 200 } },
    'DELETE /projects/:id/deploy_keys/:key_id':         { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 204, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 204 } },
    'POST /projects/:id/deploy_keys/:key_id/enable':    { private: { anonymous: 401, nonMember: 404, ...BELOW_MAINTAINER, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, ...BELOW_MAINTAINER, maintainer: 201 } },
  };

  let callers: Callers;
  const projects = new Map<Visibility, number>();
  /** A key enabled in each project, the target of calls that change nothing. */
  const seeded = new Map<Visibility, number>();
  /** A project every member role belongs to, where keys to enable come from. */
  let origin: number;

  /** A new key, made by root in `projectId`. */
  async function newKey(projectId: number): Promise<number> {
    const res = await api.post(`/projects/${projectId}/deploy_keys`, { title: 'made by root', key: sshPublicKey() });
    if (res.status !== 201) throw new Error(`POST deploy_keys: ${res.status} ${res.text}`);
    return res.body.id;
  }

  beforeAll(async () => {
    callers = await createCallers(api);
    origin = await sourceWithRoles(api, callers, 'projects', 'private');
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      projects.set(visibility, id);
      seeded.set(visibility, await newKey(id));
    }
  });

  describe('/projects/:id/deploy_keys', () => {
    permissionMatrix(TABLE, async ({ endpoint, caller, visibility, status }) => {
      const id = projects.get(visibility)!;
      const token = callers[caller].token;
      const succeeds = status < 400;
      const base = `/projects/${id}/deploy_keys`;
      switch (endpoint) {
        case 'GET /projects/:id/deploy_keys':
          return (await api.get(base, { token })).status;
        case 'GET /projects/:id/deploy_keys/:key_id':
          return (await api.get(`${base}/${seeded.get(visibility)}`, { token })).status;
        case 'POST /projects/:id/deploy_keys':
          return (await api.post(base, { title: caller, key: sshPublicKey() }, { token })).status;
        case 'PUT /projects/:id/deploy_keys/:key_id':
          return (await api.put(`${base}/${seeded.get(visibility)}`, { title: caller }, { token })).status;
        case 'DELETE /projects/:id/deploy_keys/:key_id':
          return (await api.del(`${base}/${succeeds ? await newKey(id) : seeded.get(visibility)}`, { token })).status;
        case 'POST /projects/:id/deploy_keys/:key_id/enable':
          return (await api.post(`${base}/${await newKey(origin)}/enable`, undefined, { token })).status;
        default:
          throw new Error(`no call for ${endpoint}`);
      }
    });
  });

  describe('GET /deploy_keys', () => {
    it.each<[Role, number]>([
      ['anonymous', 401],
      ['nonMember', 403],
      ['maintainer', 403],
      ['owner', 403],
      ['admin', 200],
    ])('as %s → %i', async (role, status) => {
      expect((await api.get('/deploy_keys', { token: callers[role].token })).status).toBe(status);
    });
  });
});
