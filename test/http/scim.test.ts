import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, eventually, settled, type GroupFixture } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const FINGERPRINT = 'aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd';
const SSO_URL = 'https://idp.example.com/saml/sso';
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const scimError = (status: number, detail: string) => ({ schemas: [ERROR_SCHEMA], detail, status });

interface ScimResponse {
  status: number;
  body: any;
  text: string;
  type: string | null;
}

/** A SCIM request as an identity provider sends it: its own base, a bearer token, `application/scim+json`. */
async function scim(method: string, path: string, options: { token?: string | null; body?: unknown; query?: Record<string, string> } = {}): Promise<ScimResponse> {
  const url = new URL(`${api.url}/api/scim/v2${path}`);
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
  const headers: Record<string, string> = { 'content-type': 'application/scim+json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(url, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await response.text();
  return { status: response.status, text, body: text === '' ? null : JSON.parse(text), type: response.headers.get('content-type') };
}

/** A top-level group with SAML SSO enabled and a SCIM token, made through the extension endpoints as its owner (root). */
async function scimGroup(): Promise<{ group: GroupFixture; token: string; users: string }> {
  const group = await createGroup(api);
  expect((await api.put(`/groups/${group.id}/saml`, { sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT })).status).toBe(200);
  const token = (await api.post(`/groups/${group.id}/scim/token`)).body.scim_token;
  return { group, token, users: `/groups/${encodeURIComponent(group.full_path)}/Users` };
}

let counter = 0;
const newUser = (overrides: Record<string, unknown> = {}) => {
  const n = `${++counter}x${process.pid}`;
  return {
    schemas: [USER_SCHEMA],
    externalId: `uid-${n}`,
    active: true,
    userName: `jane.doe${n}`,
    emails: [{ primary: true, type: 'work', value: `jane${n}@example.com` }],
    name: { formatted: 'Jane Doe', familyName: 'Doe', givenName: 'Jane' },
    meta: { resourceType: 'User' },
    ...overrides,
  };
};

const memberLevel = async (groupId: number, userId: number) => {
  const res = await api.get(`/groups/${groupId}/members/${userId}`);
  return res.status === 200 ? res.body.access_level : res.status;
};

describe('a SCIM sequence: create, filter, deactivate, delete', () => {
  it('provisions a user, finds it, deprovisions it, and answers in SCIM form throughout', async () => {
    const { group, token, users } = await scimGroup();
    const body = newUser({ externalId: 'azure-0001', userName: 'jane.doe@example.com', emails: [{ primary: true, type: 'work', value: 'jane.doe@example.com' }] });

    const created = await scim('POST', users, { token, body });
    expect(created.status).toBe(201);
    expect(created.type).toBe('application/scim+json');
    expect(created.body).toEqual({
      schemas: [USER_SCHEMA],
      id: 'azure-0001',
      active: true,
      emails: [{ type: 'work', value: 'jane.doe@example.com', primary: true }],
      'name.formatted': 'Jane Doe',
      meta: { resourceType: 'User' },
      // Namespace.clean_path: the part before the @.
      userName: 'jane.doe',
    });
    expect(Object.keys(created.body)).toEqual(['schemas', 'id', 'active', 'emails', 'name.formatted', 'meta', 'userName']);

    // A user with an unconfirmed email and a random password, a guest of the group.
    const user = (await api.get('/users', { query: { username: 'jane.doe' } })).body[0];
    expect(user).toMatchObject({ username: 'jane.doe', name: 'Jane Doe', email: 'jane.doe@example.com', confirmed_at: null, state: 'active' });
    expect(await memberLevel(group.id, user.id)).toBe(10);
    const events = await api.events(`scim-${group.id}`);
    expect(events.map((e) => e.type)).toEqual(['SamlProviderConfigured', 'ScimTokenGenerated', 'GroupSamlIdentityLinked']);
    expect(events[2]!.data).toEqual({ group_id: group.id, identity_id: expect.any(Number), user_id: user.id, extern_uid: 'azure-0001' });
    expect(events[2]!.metadata.actor_id).toBeNull();

    // The same identity again: answered as created, nothing appended.
    const again = await scim('POST', `${users}/`, { token, body });
    expect(again).toMatchObject({ status: 201, body: created.body });
    expect(await api.events(`scim-${group.id}`)).toHaveLength(3);

    const byId = await scim('GET', users, { token, query: { filter: 'id eq "azure-0001"' } });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ schemas: [LIST_SCHEMA], totalResults: 1, itemsPerPage: 20, startIndex: 1, Resources: [created.body] });
    const byUserName = await scim('GET', users, { token, query: { filter: 'userName eq "jane.doe"' } });
    expect(byUserName.body.Resources).toEqual([created.body]);
    const byEmail = await scim('GET', users, { token, query: { filter: 'userName eq "jane.doe@example.com"' } });
    expect(byEmail.body.totalResults).toBe(1);
    expect((await scim('GET', users, { token, query: { filter: 'id eq "nobody"' } })).body).toEqual({ schemas: [LIST_SCHEMA], totalResults: 0, itemsPerPage: 20, startIndex: 1, Resources: [] });
    expect(await scim('GET', `${users}/AZURE-0001`, { token })).toMatchObject({ status: 200, body: created.body });

    const renamed = await scim('PATCH', `${users}/azure-0001`, { token, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'name.formatted', value: 'Jane Q. Doe' }] } });
    expect(renamed).toMatchObject({ status: 204, text: '' });
    expect((await scim('GET', `${users}/azure-0001`, { token })).body['name.formatted']).toBe('Jane Q. Doe');

    const deactivated = await scim('PATCH', `${users}/azure-0001`, { token, body: { Operations: [{ op: 'Replace', path: 'active', value: 'False' }] } });
    expect(deactivated).toMatchObject({ status: 204, text: '' });
    expect(await memberLevel(group.id, user.id)).toBe(404);
    expect(await scim('GET', `${users}/azure-0001`, { token })).toMatchObject({ status: 404, body: scimError(404, 'Resource azure-0001 not found') });
    // The account stays.
    expect((await api.get(`/users/${user.id}`)).status).toBe(200);

    // Provisioned again (a new account: the old one keeps its email, so that is a conflict).
    const conflict = await scim('POST', users, { token, body });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual(scimError(409, expect.stringMatching(/^Error saving user with \{.*"externalId"=>"azure-0001".*\}: Email has already been taken$/)));
    const other = newUser({ externalId: 'azure-0001' });
    expect((await scim('POST', users, { token, body: other })).status).toBe(201);

    const deleted = await scim('DELETE', `${users}/azure-0001`, { token });
    expect(deleted).toMatchObject({ status: 204, text: '' });
    expect(await scim('DELETE', `${users}/azure-0001`, { token })).toMatchObject({ status: 404, body: scimError(404, 'Resource azure-0001 not found') });
    expect(await scim('PATCH', `${users}/azure-0001`, { token, body: { Operations: [] } })).toMatchObject({ status: 404, body: scimError(404, 'Resource azure-0001 not found') });
    expect((await api.events(`scim-${group.id}`)).map((e) => e.type)).toEqual([
      'SamlProviderConfigured',
      'ScimTokenGenerated',
      'GroupSamlIdentityLinked',
      'GroupSamlIdentityUnlinked',
      'GroupSamlIdentityLinked',
      'GroupSamlIdentityUnlinked',
    ]);
  });
});

describe('POST /api/scim/v2/groups/:group_path/Users', () => {
  it('gives a taken username a number, as Namespace.clean_path does', async () => {
    const { token, users } = await scimGroup();
    const base = `sam${process.pid}`;
    expect((await scim('POST', users, { token, body: newUser({ userName: base }) })).body.userName).toBe(base);
    expect((await scim('POST', users, { token, body: newUser({ userName: `${base}@example.org` }) })).body.userName).toBe(`${base}1`);
    expect((await scim('POST', users, { token, body: newUser({ userName: base }) })).body.userName).toBe(`${base}2`);
    // Characters a path may not have go, and a trailing '.git'; given and family names make the name.
    const cleaned = await scim('POST', users, { token, body: newUser({ userName: `-Ann Lee!${process.pid}.git`, name: { givenName: 'Ann', familyName: 'Lee' } }) });
    expect(cleaned.body).toMatchObject({ userName: `AnnLee${process.pid}`, 'name.formatted': 'Ann Lee' });
  });

  it('answers missing and invalid attributes with 412, and writes nothing', async () => {
    const { group, token, users } = await scimGroup();
    const missing = await scim('POST', users, { token, body: { externalId: 'x1' } });
    expect(missing.status).toBe(412);
    expect(missing.body).toEqual(scimError(412, `Error saving user with {"externalId"=>"x1", "group"=>"${group.full_path}"}: Missing params: [:email, :username]`));
    const invalid = await scim('POST', users, { token, body: newUser({ emails: [{ type: 'work', value: 'not-an-email' }], name: { formatted: '' } }) });
    expect(invalid.status).toBe(412);
    expect(invalid.body.detail).toMatch(/: Name can't be blank and Email is invalid$/);
    expect(await api.events(`scim-${group.id}`)).toHaveLength(2);
  });

  it('answers an existing identity of a member as created; of a user no longer a member, 409, committing nothing', async () => {
    const { group, token, users } = await scimGroup();
    const created = (await scim('POST', users, { token, body: newUser({ externalId: 'dup' }) })).body;
    const members = async () => (await api.get(`/groups/${group.id}/members`)).body.length;
    const before = await members();
    // extern_uid is matched case-insensitively.
    const body = newUser({ externalId: 'DUP' });
    expect(await scim('POST', users, { token, body })).toMatchObject({ status: 201, body: created });
    expect((await api.get('/users', { query: { search: body.emails[0]!.value } })).body).toEqual([]);

    const user = (await api.get('/users', { query: { username: created.userName } })).body[0];
    expect((await api.del(`/groups/${group.id}/members/${user.id}`)).status).toBe(204);
    const res = await scim('POST', users, { token, body });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/: Extern uid has already been taken$/);
    expect((await api.get('/users', { query: { search: body.emails[0]!.value } })).body).toEqual([]);
    expect(await members()).toBe(before - 1);
  });
});

describe('GET /api/scim/v2/groups/:group_path/Users', () => {
  it('pages by startIndex (1-based, below 1 as 1) and count, and refuses other filters', async () => {
    const { token, users } = await scimGroup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await scim('POST', users, { token, body: newUser() })).body.id);
    const all = await scim('GET', users, { token });
    expect(all.body).toMatchObject({ totalResults: 3, itemsPerPage: 20, startIndex: 1 });
    expect(all.body.Resources.map((r: any) => r.id)).toEqual(ids);
    const page = await scim('GET', users, { token, query: { startIndex: '2', count: '1' } });
    expect(page.body).toMatchObject({ totalResults: 3, itemsPerPage: 1, startIndex: 2 });
    expect(page.body.Resources.map((r: any) => r.id)).toEqual([ids[1]]);
    expect((await scim('GET', users, { token, query: { startIndex: '-4', count: '2' } })).body).toMatchObject({ startIndex: 1, itemsPerPage: 2, Resources: [{ id: ids[0] }, { id: ids[1] }] });
    expect((await scim('GET', users, { token, query: { count: '0' } })).body.itemsPerPage).toBe(20);
    expect((await scim('GET', users, { token, query: { count: '500' } })).body.itemsPerPage).toBe(100);
    for (const filter of ['id ne "x"', 'emails eq "a@b.c"', 'nonsense', 'id eq ""']) {
      expect(await scim('GET', users, { token, query: { filter } })).toMatchObject({ status: 412, body: scimError(412, 'Unsupported Filter') });
    }
  });
});

describe('PATCH /api/scim/v2/groups/:group_path/Users/:id', () => {
  it('changes the extern_uid alone, the email (to confirm), the username; a taken email is 409', async () => {
    const { group, token, users } = await scimGroup();
    const created = (await scim('POST', users, { token, body: newUser({ externalId: 'old-uid' }) })).body;
    expect(await scim('PATCH', `${users}/old-uid`, { token, body: { Operations: [{ op: 'Replace', path: 'id', value: 'new-uid' }, { op: 'Replace', path: 'name.formatted', value: 'Ignored' }] } })).toMatchObject({ status: 204 });
    expect((await scim('GET', `${users}/new-uid`, { token })).body).toEqual({ ...created, id: 'new-uid' });
    expect((await api.events(`scim-${group.id}`)).at(-1)).toMatchObject({ type: 'GroupSamlIdentityUidChanged', data: { extern_uid: 'new-uid', previous_extern_uid: 'old-uid' } });

    const other = await api.createUser();
    const taken = await scim('PATCH', `${users}/new-uid`, { token, body: { Operations: [{ op: 'Replace', path: 'emails[type eq "work"].value', value: other.user.email }] } });
    expect(taken).toMatchObject({ status: 409, body: scimError(409, 'Email has already been taken') });

    // Okta's form: lower-case op, the attributes in the value.
    expect(await scim('PATCH', `${users}/new-uid`, { token, body: { Operations: [{ op: 'replace', value: { userName: 'renamed-by-scim' } }] } })).toMatchObject({ status: 204 });
    expect((await scim('GET', `${users}/new-uid`, { token })).body.userName).toBe('renamed-by-scim');

    const invalid = await scim('PATCH', `${users}/new-uid`, { token, body: { Operations: [{ op: 'Replace', path: 'name.formatted', value: '' }] } });
    expect(invalid).toMatchObject({ status: 412, body: { schemas: [ERROR_SCHEMA], status: 412, detail: expect.stringMatching(/^Error updating Jane Doe with \{/) } });
    expect((await scim('PATCH', `${users}/new-uid`, { token, body: {} })).status).toBe(412);
  });

  it("keeps a group's last owner when deprovisioning it, and removes the identity", async () => {
    const { group, token, users } = await scimGroup();
    const created = (await scim('POST', users, { token, body: newUser() })).body;
    const user = (await api.get('/users', { query: { username: created.userName } })).body[0];
    expect((await api.put(`/groups/${group.id}/members/${user.id}`, { access_level: 50 })).status).toBe(200);
    // root, the creator, leaves: the provisioned user is the last owner.
    const root = (await api.get('/user')).body;
    expect((await api.del(`/groups/${group.id}/members/${root.id}`)).status).toBe(204);
    expect((await scim('PATCH', `${users}/${created.id}`, { token, body: { Operations: [{ op: 'Replace', path: 'active', value: false }] } })).status).toBe(204);
    expect(await memberLevel(group.id, user.id)).toBe(50);
    expect((await scim('GET', `${users}/${created.id}`, { token })).status).toBe(404);
  });
});

describe('a deleted user', () => {
  it('loses its identity, so its extern_uid can be provisioned again', async () => {
    const { token, users } = await scimGroup();
    const created = (await scim('POST', users, { token, body: newUser({ externalId: 'leaver' }) })).body;
    const user = (await api.get('/users', { query: { username: created.userName } })).body[0];
    expect((await api.del(`/users/${user.id}`, { query: { hard_delete: true } })).status).toBe(204);
    await eventually(async () => ((await scim('GET', `${users}/leaver`, { token })).status === 404 ? true : undefined));
    expect((await scim('GET', users, { token })).body.totalResults).toBe(0);
    await eventually(async () => ((await scim('POST', users, { token, body: newUser({ externalId: 'leaver' }) })).status === 201 ? true : undefined));
  });
});

describe('SCIM authentication and the group', () => {
  it("takes only that group's SCIM token as a bearer token (401 as GitLab), and names an unknown group in SCIM form", async () => {
    const { group, token, users } = await scimGroup();
    const other = await scimGroup();
    const unauthorized = { status: 401, body: { message: '401 Unauthorized' }, type: 'application/scim+json' };
    expect(await scim('GET', users, {})).toMatchObject(unauthorized);
    expect(await scim('GET', users, { token: other.token })).toMatchObject(unauthorized);
    expect(await scim('GET', users, { token: api.rootToken })).toMatchObject(unauthorized);
    expect(await scim('POST', users, { token: 'nonsense', body: newUser() })).toMatchObject(unauthorized);
    const privateToken = await fetch(`${api.url}/api/scim/v2${users}`, { headers: { 'private-token': token } });
    expect(privateToken.status).toBe(401);
    expect(await scim('GET', '/groups/no-such-group/Users', { token })).toMatchObject({ status: 404, body: scimError(404, 'Group no-such-group not found') });
    expect((await scim('GET', `/groups/${group.id}/Users`, { token })).status).toBe(200);
  });

  it('replaces the token: the old one stops working', async () => {
    const { group, token, users } = await scimGroup();
    const res = await api.post(`/groups/${group.id}/scim/token`);
    expect(res.body).toEqual({ scim_api_url: `${api.url}/api/scim/v2/groups/${group.full_path}`, scim_token: expect.stringMatching(/^[\w-]{20}$/) });
    expect((await scim('GET', users, { token })).status).toBe(401);
    expect((await scim('GET', users, { token: res.body.scim_token })).status).toBe(200);
    // Only the digest is in the log.
    const events = await api.events(`scim-${group.id}`);
    expect(JSON.stringify(events)).not.toContain(res.body.scim_token);
  });

  it('answers 404 in SCIM form while SAML SSO is disabled, and on a plan without group_saml', async () => {
    const { group, token, users } = await scimGroup();
    const notConfigured = { status: 404, body: scimError(404, `Group ${group.full_path} does not have SAML SSO configured`) };
    await onPlan(api, 'starter', async () => {
      expect(await scim('GET', users, { token })).toMatchObject(notConfigured);
      expect(await scim('POST', users, { token, body: newUser() })).toMatchObject(notConfigured);
    });
    expect((await api.put(`/groups/${group.id}/saml`, { enabled: false })).body).toEqual({ enabled: false, sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT });
    expect(await scim('GET', users, { token })).toMatchObject(notConfigured);
    expect(await scim('DELETE', `${users}/x`, { token })).toMatchObject(notConfigured);
    // A token without any SAML settings.
    const bare = await createGroup(api);
    const bareToken = (await api.post(`/groups/${bare.id}/scim/token`)).body.scim_token;
    expect(await scim('GET', `/groups/${bare.full_path}/Users`, { token: bareToken })).toMatchObject({ status: 404, body: scimError(404, `Group ${bare.full_path} does not have SAML SSO configured`) });
  });

  it('answers a body that is not JSON with 400, in GitLab form', async () => {
    const { token, users } = await scimGroup();
    const res = await fetch(`${api.url}/api/scim/v2${users}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, body: '{nope' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('application/scim+json');
  });
});

// ───────────────────────────── Extensions ─────────────────────────────

describe('PUT /groups/:id/saml', () => {
  it("validates as GitLab's SamlProvider, creates enabled, updates what is given", async () => {
    const group = await createGroup(api);
    const path = `/groups/${group.id}/saml`;
    expect(await api.put(path, {})).toMatchObject({
      status: 400,
      body: { message: { sso_url: ["can't be blank"], certificate_fingerprint: ["can't be blank", 'must be a hash containing only letters, numbers, spaces, : and -'] } },
    });
    expect(await api.put(path, { sso_url: 'http://idp.example.com', certificate_fingerprint: 'xyz' })).toMatchObject({
      status: 400,
      body: { message: { sso_url: ['is blocked: Only allowed schemes are https'], certificate_fingerprint: ['must be a hash containing only letters, numbers, spaces, : and -'] } },
    });
    expect(await api.put(path, { sso_url: 'nope', certificate_fingerprint: FINGERPRINT })).toMatchObject({ status: 400, body: { message: { sso_url: ['is blocked: URI is invalid'] } } });
    expect(await api.put(path, { enabled: 'maybe' })).toMatchObject({ status: 400, body: { error: 'enabled is invalid' } });
    expect(await api.events(`scim-${group.id}`)).toEqual([]);
    const created = await api.put(path, { sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT });
    expect(created).toMatchObject({ status: 200, body: { enabled: true, sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT } });
    expect(Object.keys(created.body)).toEqual(['enabled', 'sso_url', 'certificate_fingerprint']);
    expect((await api.put(path, { sso_url: 'https://other.example.com/sso' })).body).toEqual({ enabled: true, sso_url: 'https://other.example.com/sso', certificate_fingerprint: FINGERPRINT });
    expect((await api.put(path, { sso_url: 'https://other.example.com/sso' })).status).toBe(200);
    expect((await api.events(`scim-${group.id}`)).map((e) => e.type)).toEqual(['SamlProviderConfigured', 'SamlProviderConfigured']);
  });

  it('is for top-level groups on a plan with group_saml (404 otherwise)', async () => {
    const parent = await createGroup(api);
    const child = await createGroup(api, { parent });
    const body = { sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT };
    expect(await api.put(`/groups/${child.id}/saml`, body)).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
    expect(await api.post(`/groups/${child.id}/scim/token`)).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
    await onPlan(api, 'starter', async () => {
      expect(await api.put(`/groups/${parent.id}/saml`, body)).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
      expect(await api.post(`/groups/${parent.id}/scim/token`)).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
    });
    await onPlan(api, 'premium', async () => {
      expect((await api.put(`/groups/${parent.id}/saml`, body)).status).toBe(200);
    });
    expect(await api.put('/groups/999999/saml', body)).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Owners (and administrators) only; a private group of others is 404, never 403.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'PUT /groups/:id/saml':        { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200, blocked: 403, external: 404 }, public: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 200, external: 403 } },
  'POST /groups/:id/scim/token': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201, blocked: 403, external: 404 }, public: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 201, external: 403 } },
};

describe('permissions', () => {
  let callers: Callers;
  const groups = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const group = await createGroup(api, { token: callers.owner.token!, visibility });
      await grantRoles(api, callers, { groups: group.id });
      groups.set(visibility, group.id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const url = path.replace(':id', String(groups.get(visibility)));
    const body = method === 'PUT' ? { sso_url: SSO_URL, certificate_fingerprint: FINGERPRINT } : undefined;
    return (await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) })).status;
  });
});

describe('hostile SCIM input', () => {
  it('answers odd parameters with 4xx, never 500', async () => {
    const { token, users } = await scimGroup();
    const get = (query: string) => fetch(`${api.url}/api/scim/v2${users}?${query}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await get('filter[]=id%20eq%20%22x%22')).toBe(412);
    expect(await get('filter[a]=b')).toBe(412);
    expect(await get('count=99999999999999999999&startIndex=99999999999999999999')).toBe(200);
    expect(await get('filter=id%20eq%20%22%00%22')).toBe(400);
    for (const body of [{ Operations: 'x' }, { Operations: [null, 1, { op: 5 }, { op: 'Replace', path: 'active', value: { nested: true } }] }, { Operations: [{ op: 'Replace', path: 'userName', value: ['a'] }] }]) {
      expect([204, 404, 412]).toContain((await scim('PATCH', `${users}/x`, { token, body })).status);
    }
    const created = (await scim('POST', users, { token, body: newUser() })).body;
    expect((await scim('PATCH', `${users}/${created.id}`, { token, body: { Operations: [null, 1, { op: 5 }, { op: 'Replace', path: 'userName', value: ['a'] }] } })).status).toBe(204);
    expect((await scim('POST', users, { token, body: { externalId: ['x'], userName: { a: 1 }, emails: 'no', name: 7 } })).status).toBe(412);
    expect((await scim('POST', users, { token, body: newUser({ externalId: 'x'.repeat(300), userName: 'y'.repeat(300) }) })).status).toBeLessThan(500);
  });
});

describe('an externalId PostgreSQL cannot index (issue 20, item 4)', () => {
  it("POST and PATCH refuse an extern_uid past 255 characters with SCIM's 412, and record nothing", async () => {
    const { group, token, users } = await scimGroup();
    const long = 'u'.repeat(1024 * 1024);
    const res = await scim('POST', users, { token, body: newUser({ externalId: long }) });
    expect(res.status).toBe(412);
    expect(res.body.detail).toMatch(/^Error saving user with .*: Extern uid is too long \(maximum is 255 characters\)$/s);
    expect((await scim('GET', users, { token })).body.totalResults).toBe(0);
    const created = (await scim('POST', users, { token, body: newUser({ externalId: 'v'.repeat(255) }) })).body;
    expect(created.id).toBe('v'.repeat(255));
    const before = (await api.events(`scim-${group.id}`)).length;
    const patched = await scim('PATCH', `${users}/${created.id}`, { token, body: { Operations: [{ op: 'Replace', path: 'id', value: long }] } });
    expect(patched).toMatchObject({ status: 412, body: { detail: expect.stringMatching(/^Error updating /) } });
    expect(await api.events(`scim-${group.id}`)).toHaveLength(before);
  });
});
