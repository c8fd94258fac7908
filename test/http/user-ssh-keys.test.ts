import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userSshKeysProjector } from '../../src/projections/user-ssh-keys/projector.js';
import { deployKeysProjector } from '../../src/projections/deploy-keys/projector.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, type Callers } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import sshpk from 'sshpk';

let api: TestServer;
let mia: { user: any; token: string };
let otto: { user: any; token: string };

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  [mia, otto] = await Promise.all([api.createUser(), api.createUser()]);
});
afterAll(() => api.close());

/** Entities::SSHKey (12.10): no expires_at yet. */
const SSH_KEY = ['id', 'title', 'key', 'created_at'];

async function addKey(body: Record<string, unknown>, token = mia.token) {
  const res = await api.post('/user/keys', body, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; title: string; key: string; created_at: string };
}

const md5 = (key: string) => sshpk.parseKey(key, 'ssh').fingerprint('md5').toString('hex');
const sha256 = (key: string) => sshpk.parseKey(key, 'ssh').fingerprint('sha256').toString('base64');

describe('POST /user/keys', () => {
  it("adds a key to the caller's keys (Entities::SSHKey), one stream per key", async () => {
    const key = sshPublicKey('ed25519', 'mia@laptop');
    const res = await api.post('/user/keys', { title: 'Laptop', key: `  ${key}\n` }, { token: mia.token });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(SSH_KEY);
    expect(res.body).toMatchObject({ title: 'Laptop', key });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await api.get(`/user/keys/${res.body.id}`, { token: mia.token })).body).toEqual(res.body);
    const events = await api.events(`ssh-key-${res.body.id}`);
    expect(events.map((e) => e.type)).toEqual(['UserSshKeyAdded']);
    expect(events[0]!.data).toEqual({ id: res.body.id, user_id: mia.user.id, title: 'Laptop', key, fingerprint: md5(key), fingerprint_sha256: sha256(key).replace(/^SHA256:/, '') });
    expect(events[0]!.metadata).toMatchObject({ actor_id: mia.user.id });
  });

  it('takes every supported key type, and joins a pasted key broken across lines (Gitlab::SSHPublicKey.sanitize)', async () => {
    const user = await api.createUser();
    for (const kind of ['rsa2048', 'dsa', 'ecdsa256', 'ecdsa384', 'ecdsa521'] as const) await addKey({ title: kind, key: sshPublicKey(kind) }, user.token);
    const [type, blob] = sshPublicKey('ed25519').split(' ') as [string, string];
    const pasted = await addKey({ title: 'pasted', key: `${type} ${blob.slice(0, 20)}\n${blob.slice(20)} me@host and more` }, user.token);
    expect(pasted.key).toBe(`${type} ${blob} me@host`);
    const listed = await api.get('/user/keys', { token: user.token });
    expect(listed.body.map((k: any) => k.title)).toEqual(['rsa2048', 'dsa', 'ecdsa256', 'ecdsa384', 'ecdsa521', 'pasted']);
  });

  it("answers Grape's errors for missing parameters (key first), and no expires_at is declared in 12.10", async () => {
    expect(await api.post('/user/keys', {}, { token: mia.token })).toMatchObject({ status: 400, body: { error: 'key is missing, title is missing' } });
    expect(await api.post('/user/keys', { title: 't' }, { token: mia.token })).toMatchObject({ status: 400, body: { error: 'key is missing' } });
    // An undeclared parameter is ignored, as Grape's declared_params does.
    const key = await addKey({ title: 'expiring?', key: sshPublicKey(), expires_at: '2030-01-01T00:00:00Z' });
    expect(Object.keys(key)).toEqual(SSH_KEY);
  });

  it("answers an invalid key with the Key model's errors, and adds nothing", async () => {
    const user = await api.createUser();
    const res = await api.post('/user/keys', { title: '', key: 'some key' }, { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: {
        title: ["can't be blank"],
        key: ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
        fingerprint: ['cannot be generated'],
      },
    });
    const blank = await api.post('/user/keys', { title: 'x'.repeat(256), key: '' }, { token: user.token });
    expect(blank.body).toEqual({
      message: {
        title: ['is too long (maximum is 255 characters)'],
        key: ["can't be blank", 'is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'],
        fingerprint: ['cannot be generated'],
      },
    });
    const truncated = await api.post('/user/keys', { title: 't', key: sshPublicKey('rsa2048').slice(0, 200) }, { token: user.token });
    expect(truncated.body).toEqual({ message: { fingerprint: ['cannot be generated'], key: ['type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'] } });
    expect((await api.get('/user/keys', { token: user.token })).body).toEqual([]);
  });

  it("refuses a fingerprint any key holds — the caller's, another user's, a deploy key's — and a deploy key refuses a user's", async () => {
    const key = sshPublicKey();
    await addKey({ title: 'first', key });
    const taken = { status: 400, body: { message: { fingerprint: ['has already been taken'] } } };
    expect(await api.post('/user/keys', { title: 'again', key }, { token: mia.token })).toMatchObject(taken);
    // The same key with another comment is another text, but the same fingerprint.
    const [type, blob] = key.split(' ');
    expect(await api.post('/user/keys', { title: 'theirs', key: `${type} ${blob} otto@host` }, { token: otto.token })).toMatchObject(taken);
    const project = await createProject(api, { token: otto.token });
    expect(await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deploy', key }, { token: otto.token })).toMatchObject({
      status: 400,
      body: { message: { 'deploy_key.fingerprint': ['has already been taken'] } },
    });
    const deployKey = sshPublicKey();
    expect((await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deploy', key: deployKey }, { token: otto.token })).status).toBe(201);
    expect(await api.post('/user/keys', { title: 'a deploy key', key: deployKey }, { token: otto.token })).toMatchObject(taken);
  });

  it("refuses a key the instance's restrictions forbid or find too small", async () => {
    const user = await api.createUser();
    expect((await api.put('/application/settings', { rsa_key_restriction: 2048, dsa_key_restriction: -1 })).status).toBe(200);
    try {
      expect(await api.post('/user/keys', { title: 'small', key: sshPublicKey('rsa1024') }, { token: user.token })).toMatchObject({
        status: 400,
        body: { message: { key: ['must be at least 2048 bits'] } },
      });
      expect(await api.post('/user/keys', { title: 'dsa', key: sshPublicKey('dsa') }, { token: user.token })).toMatchObject({
        status: 400,
        body: { message: { key: ['type is forbidden. Must be RSA, ECDSA, or ED25519'] } },
      });
      await addKey({ title: 'big enough', key: sshPublicKey('rsa2048') }, user.token);
    } finally {
      expect((await api.put('/application/settings', { rsa_key_restriction: 0, dsa_key_restriction: 0 })).status).toBe(200);
    }
    await addKey({ title: 'dsa again', key: sshPublicKey('dsa') }, user.token);
  });
});

describe('GET /user/keys and GET /user/keys/:key_id', () => {
  it("lists the caller's keys only, by id, paged", async () => {
    const user = await api.createUser();
    for (const title of ['k1', 'k2', 'k3']) await addKey({ title, key: sshPublicKey() }, user.token);
    await addKey({ title: 'not theirs', key: sshPublicKey() });
    const page = await api.get('/user/keys', { token: user.token, query: { per_page: 2, page: 2 } });
    expect(page.status).toBe(200);
    expect(page.body.map((k: any) => k.title)).toEqual(['k3']);
    expect(page.headers.get('x-total')).toBe('3');
  });

  it("answers 404 Key Not Found for another user's key, and Grape's error for a bad id", async () => {
    const key = await addKey({ title: 'mine', key: sshPublicKey() });
    expect(await api.get(`/user/keys/${key.id}`, { token: otto.token })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    expect(await api.get('/user/keys/99999999999', { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    expect(await api.get('/user/keys/abc', { token: mia.token })).toMatchObject({ status: 400, body: { error: 'key_id is invalid' } });
  });

  it("does not show a deploy key the caller made (GitLab's user.keys are regular keys)", async () => {
    const user = await api.createUser();
    const project = await createProject(api, { token: user.token });
    const deploy = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deploy', key: sshPublicKey() }, { token: user.token });
    expect(deploy.status).toBe(201);
    expect((await api.get('/user/keys', { token: user.token })).body).toEqual([]);
    expect(await api.get(`/user/keys/${deploy.body.id}`, { token: user.token })).toMatchObject({ status: 404 });
  });
});

describe('DELETE /user/keys/:key_id', () => {
  it('removes the key and frees its fingerprint', async () => {
    const key = await addKey({ title: 'gone', key: sshPublicKey() });
    expect((await api.del(`/user/keys/${key.id}`, { token: mia.token })).status).toBe(204);
    expect((await api.get(`/user/keys/${key.id}`, { token: mia.token })).status).toBe(404);
    expect((await api.events(`ssh-key-${key.id}`)).map((e) => e.type)).toEqual(['UserSshKeyAdded', 'UserSshKeyRemoved']);
    await addKey({ title: 'back', key: key.key }, otto.token);
  });

  it("answers 404 Key Not Found for another user's key or a removed one, and 412 after If-Unmodified-Since", async () => {
    const key = await addKey({ title: 'kept', key: sshPublicKey() });
    expect(await api.del(`/user/keys/${key.id}`, { token: otto.token })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    const res = await api.del(`/user/keys/${key.id}`, { token: mia.token, headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    expect(res.status).toBe(412);
    expect((await api.get(`/user/keys/${key.id}`, { token: mia.token })).status).toBe(200);
    expect((await api.del(`/user/keys/${key.id}`, { token: mia.token })).status).toBe(204);
    expect(await api.del(`/user/keys/${key.id}`, { token: mia.token })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
  });
});

describe('GET /users/:user_id/keys', () => {
  it("lists a user's keys to anyone, by id or by username", async () => {
    const user = await api.createUser();
    const key = await addKey({ title: 'public', key: sshPublicKey() }, user.token);
    for (const path of [`/users/${user.user.id}/keys`, `/users/${user.user.username}/keys`]) {
      const res = await api.get(path, { token: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([key]);
    }
    expect((await api.get(`/users/${user.user.id}/keys`, { token: otto.token })).body).toEqual([key]);
  });

  it('answers 404 User Not Found', async () => {
    expect(await api.get('/users/99999999/keys', { token: null })).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await api.get('/users/no-such-user-here/keys', { token: null })).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
  });
});

describe('POST /users/:id/keys (administrators)', () => {
  it("adds a key to the user's keys", async () => {
    const user = await api.createUser();
    const key = sshPublicKey();
    const res = await api.post(`/users/${user.user.id}/keys`, { title: 'by admin', key });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(SSH_KEY);
    expect((await api.get('/user/keys', { token: user.token })).body).toEqual([res.body]);
    expect((await api.events(`ssh-key-${res.body.id}`))[0]!.data.user_id).toBe(user.user.id);
  });

  it("answers Grape's errors before the admin check, then 403, 404 User Not Found, and the model's errors", async () => {
    expect(await api.post(`/users/${mia.user.id}/keys`, {}, { token: otto.token })).toMatchObject({ status: 400, body: { error: 'key is missing, title is missing' } });
    expect(await api.post(`/users/${mia.user.id}/keys`, { title: 't', key: sshPublicKey() }, { token: otto.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await api.post('/users/99999999/keys', { title: 't', key: sshPublicKey() })).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await api.post(`/users/${mia.user.id}/keys`, { title: 't', key: 'ssh-rsa nonsense' })).toMatchObject({
      status: 400,
      body: { message: { fingerprint: ['cannot be generated'], key: ['type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'] } },
    });
    // GitLab's route requirement: `:id` is digits.
    expect((await api.post(`/users/${mia.user.username}/keys`, { title: 't', key: sshPublicKey() })).status).toBe(404);
  });
});

describe('DELETE /users/:id/keys/:key_id (administrators)', () => {
  it("removes the user's key; another user's key is 404 Key Not Found", async () => {
    const key = await addKey({ title: 'admin removes', key: sshPublicKey() });
    expect(await api.del(`/users/${otto.user.id}/keys/${key.id}`)).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    expect(await api.del(`/users/99999999/keys/${key.id}`)).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await api.del(`/users/${mia.user.id}/keys/abc`)).toMatchObject({ status: 400, body: { error: 'key_id is invalid' } });
    expect((await api.del(`/users/${mia.user.id}/keys/${key.id}`)).status).toBe(204);
    expect((await api.get(`/user/keys/${key.id}`, { token: mia.token })).status).toBe(404);
    const event = (await api.events(`ssh-key-${key.id}`)).at(-1)!;
    expect(event).toMatchObject({ type: 'UserSshKeyRemoved', data: { id: key.id, user_id: mia.user.id } });
  });
});

describe('GET /keys/:id (administrators)', () => {
  it('answers a user key with its owner (Entities::SSHKeyWithUser, UserPublic)', async () => {
    const user = await api.createUser();
    const key = await addKey({ title: 'with user', key: sshPublicKey() }, user.token);
    const res = await api.get(`/keys/${key.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([...SSH_KEY, 'user']);
    expect(res.body).toMatchObject(key);
    expect(res.body.user).toEqual((await api.get('/user', { token: user.token })).body);
  });

  it('answers a deploy key too (one keys table), with the user who made it', async () => {
    const project = await createProject(api, { token: otto.token });
    const deploy = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deploy', key: sshPublicKey() }, { token: otto.token });
    expect(deploy.status).toBe(201);
    const res = await api.get(`/keys/${deploy.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: deploy.body.id, title: 'deploy', key: deploy.body.key, user: { id: otto.user.id, username: otto.user.username } });
  });

  it('answers 404 Not found (Key.find), 403 to others and 401 to anonymous', async () => {
    expect(await api.get('/keys/99999999')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get('/keys/abc')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    const key = await addKey({ title: 'seen by admins', key: sshPublicKey() });
    expect(await api.get(`/keys/${key.id}`, { token: mia.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.get(`/keys/${key.id}`, { token: null })).status).toBe(401);
  });
});

describe('GET /keys?fingerprint= (administrators)', () => {
  it('finds a key by its MD5 or SHA256 fingerprint, of a user or a deploy key', async () => {
    const text = sshPublicKey('rsa2048');
    const key = await addKey({ title: 'by fingerprint', key: text });
    const expected = { ...key, user: expect.objectContaining({ id: mia.user.id }) };
    for (const fingerprint of [md5(text), sha256(text), sha256(text).replace('SHA256:', 'sha256:')]) {
      const res = await api.get('/keys', { query: { fingerprint } });
      expect(res.status, fingerprint).toBe(200);
      expect(res.body).toEqual(expected);
    }
    const project = await createProject(api, { token: otto.token });
    const deployText = sshPublicKey();
    const deploy = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deploy', key: deployText }, { token: otto.token });
    expect((await api.get('/keys', { query: { fingerprint: md5(deployText) } })).body).toMatchObject({ id: deploy.body.id, user: { id: otto.user.id } });
    // KeysFinder's key_type=ssh: regular keys only.
    expect(await api.get('/keys', { query: { fingerprint: md5(deployText), key_type: 'ssh' } })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    expect((await api.get('/keys', { query: { fingerprint: md5(text), key_type: 'ssh' } })).body.id).toBe(key.id);
  });

  it("answers GitLab's errors: a missing, an invalid, an unknown fingerprint; 403 and 401", async () => {
    expect(await api.get('/keys')).toMatchObject({ status: 400, body: { error: 'fingerprint is missing' } });
    for (const fingerprint of ['nonsense', 'SHA256:tooshort', 'aa:bb:cc']) {
      expect(await api.get('/keys', { query: { fingerprint } })).toMatchObject({ status: 400, body: { message: 'Failed to return the key' } });
    }
    expect(await api.get('/keys', { query: { fingerprint: Array(16).fill('00').join(':') } })).toMatchObject({ status: 404, body: { message: '404 Key Not Found' } });
    expect(await api.get('/keys', { query: { fingerprint: `SHA256:${Buffer.alloc(32).toString('base64').replace(/=+$/, '')}` } })).toMatchObject({
      status: 404,
      body: { message: '404 Key Not Found' },
    });
    expect(await api.get('/keys', { query: { fingerprint: 'x' }, token: mia.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.get('/keys', { query: { fingerprint: 'x' }, token: null })).status).toBe(401);
  });

  it("answers every key as a list for a blank fingerprint (12.10's finder filters nothing then)", async () => {
    const key = await addKey({ title: 'in the list', key: sshPublicKey() });
    const res = await api.get('/keys', { query: { fingerprint: '' } });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.find((k: any) => k.id === key.id)).toMatchObject({ ...key, user: { id: mia.user.id } });
  });
});

describe('a deleted user', () => {
  it("has its keys removed (Users::DestroyService: `dependent: :destroy`), each fingerprint freed", async () => {
    const user = await api.createUser();
    const [a, b] = [await addKey({ title: 'a', key: sshPublicKey() }, user.token), await addKey({ title: 'b', key: sshPublicKey() }, user.token)];
    expect((await api.del(`/users/${user.user.id}`)).status).toBe(204);
    // The removal is the user-ssh-key-removal reactor's: each key gets its UserSshKeyRemoved.
    for (const key of [a, b]) {
      await eventually(async () => ((await api.events(`ssh-key-${key.id}`)).some((e) => e.type === 'UserSshKeyRemoved') ? true : undefined), 30_000);
    }
    expect((await api.get(`/keys/${a.id}`)).status).toBe(404);
    await addKey({ title: 'reused', key: a.key }, otto.token);
  });
});

it('rebuilds the same tables from the log', async () => {
  await addKey({ title: 'replayed', key: sshPublicKey() }, otto.token);
  await expectReplayEquivalence(api.handle, [userSshKeysProjector, deployKeysProjector]);
});

/**
 * Who may do what with SSH keys (GitLab 12.10): the caller's own keys need a token; anyone
 * lists a user's keys; adding and deleting another user's keys, and API::Keys, are for
 * administrators. A blocked user's token is refused everywhere. The target is keyOwner's.
 */
describe('permissions', () => {
  type Caller = 'anonymous' | 'otherUser' | 'keyOwner' | 'admin' | 'blocked';
  // prettier-ignore
  const TABLE: MatrixTable<Caller, 'instance'> = {
    'GET /user/keys':                 { instance: { anonymous: 401, otherUser: 200, keyOwner: 200, admin: 200, blocked: 403 } },
    'GET /user/keys/:key_id':         { instance: { anonymous: 401, otherUser: 404, keyOwner: 200, admin: 404, blocked: 403 } },
    'POST /user/keys':                { instance: { anonymous: 401, otherUser: 201, keyOwner: 201, admin: 201, blocked: 403 } },
    'DELETE /user/keys/:key_id':      { instance: { anonymous: 401, otherUser: 404, keyOwner: 204, admin: 404, blocked: 403 } },
    'GET /users/:id/keys':            { instance: { anonymous: 200, otherUser: 200, keyOwner: 200, admin: 200, blocked: 403 } },
    'POST /users/:id/keys':           { instance: { anonymous: 401, otherUser: 403, keyOwner: 403, admin: 201, blocked: 403 } },
    'DELETE /users/:id/keys/:key_id': { instance: { anonymous: 401, otherUser: 403, keyOwner: 403, admin: 204, blocked: 403 } },
    'GET /keys/:id':                  { instance: { anonymous: 401, otherUser: 403, keyOwner: 403, admin: 200, blocked: 403 } },
    'GET /keys?fingerprint=':         { instance: { anonymous: 401, otherUser: 403, keyOwner: 403, admin: 200, blocked: 403 } },
  };

  let callers: Callers;
  let owner: { id: number; token: string };
  /** A key of keyOwner's, the target of calls that change nothing. */
  let seeded: { id: number; key: string };

  async function newKey(): Promise<number> {
    const res = await api.post(`/users/${owner.id}/keys`, { title: 'made by root', key: sshPublicKey() });
    if (res.status !== 201) throw new Error(`POST /users/:id/keys: ${res.status} ${res.text}`);
    return res.body.id;
  }

  const token = (caller: Caller) => (caller === 'keyOwner' ? callers.owner.token : caller === 'otherUser' ? callers.nonMember.token : callers[caller].token);

  beforeAll(async () => {
    callers = await createCallers(api);
    owner = { id: callers.owner.user!.id, token: callers.owner.token! };
    const id = await newKey();
    seeded = { id, key: (await api.get(`/keys/${id}`)).body.key };
  });

  permissionMatrix(TABLE, async ({ endpoint, caller, status }) => {
    const t = token(caller);
    const succeeds = status < 400;
    switch (endpoint) {
      case 'GET /user/keys':
        return (await api.get('/user/keys', { token: t })).status;
      case 'GET /user/keys/:key_id':
        return (await api.get(`/user/keys/${seeded.id}`, { token: t })).status;
      case 'POST /user/keys':
        return (await api.post('/user/keys', { title: caller, key: sshPublicKey() }, { token: t })).status;
      case 'DELETE /user/keys/:key_id':
        return (await api.del(`/user/keys/${succeeds ? await newKey() : seeded.id}`, { token: t })).status;
      case 'GET /users/:id/keys':
        return (await api.get(`/users/${owner.id}/keys`, { token: t })).status;
      case 'POST /users/:id/keys':
        return (await api.post(`/users/${owner.id}/keys`, { title: caller, key: sshPublicKey() }, { token: t })).status;
      case 'DELETE /users/:id/keys/:key_id':
        return (await api.del(`/users/${owner.id}/keys/${succeeds ? await newKey() : seeded.id}`, { token: t })).status;
      case 'GET /keys/:id':
        return (await api.get(`/keys/${seeded.id}`, { token: t })).status;
      case 'GET /keys?fingerprint=':
        return (await api.get('/keys', { query: { fingerprint: md5(seeded.key) }, token: t })).status;
      default:
        throw new Error(`no call for ${endpoint}`);
    }
  });

  it('leaves the seeded key in place', async () => {
    expect((await api.get(`/user/keys/${seeded.id}`, { token: owner.token })).status).toBe(200);
  });
});
