import { Gitlab, GitbeakerRequestError } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

// A real GitLab client (@gitbeaker/rest 43.8.0) against forgelog over HTTP.
let api: TestServer;
let gitlab: InstanceType<typeof Gitlab>;
const tag = `gb${process.pid}`;

beforeAll(async () => {
  api = await startTestServer();
  // rateLimits: {} turns off gitbeaker's own client-side throttling.
  gitlab = new Gitlab({ host: api.url, token: api.rootToken, rateLimits: {} });
});
afterAll(() => api.close());

/** The GitLab error message gitbeaker surfaces, and the HTTP status. */
async function failure(promise: Promise<unknown>): Promise<{ status: number; description: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(GitbeakerRequestError);
    const cause = (error as GitbeakerRequestError).cause as { description: string; response: Response };
    return { status: cause.response.status, description: cause.description };
  }
  throw new Error('expected the request to fail');
}

describe('Users', () => {
  it('showCurrentUser is root, with the admin view', async () => {
    const me = await gitlab.Users.showCurrentUser();
    expect(me).toMatchObject({ id: 1, username: 'root', is_admin: true, state: 'active' });
  });

  it('create sends snake_case JSON; show returns the same user', async () => {
    const created = await gitlab.Users.create({
      email: `${tag}.one@example.com`,
      username: `${tag}_one`,
      name: 'Gitbeaker One',
      password: 'password123',
      skipConfirmation: true,
      projectsLimit: 7,
      canCreateGroup: false,
    });
    expect(created).toMatchObject({ username: `${tag}_one`, name: 'Gitbeaker One', projects_limit: 7, can_create_group: false });
    expect(created.confirmed_at).toEqual(expect.any(String));
    const shown = await gitlab.Users.show(created.id as number);
    expect(shown).toEqual(created);
  });

  it('edit sends multipart with camelCase keys and "true" strings: single-word fields apply, camelCase ones are ignored as by GitLab', async () => {
    const user = await gitlab.Users.create({ email: `${tag}.edit@example.com`, username: `${tag}_edit`, name: 'Before', password: 'password123' });
    const edited = await gitlab.Users.edit(user.id as number, {
      name: 'After',
      bio: 'edited by gitbeaker',
      external: true,
      admin: true,
      websiteUrl: 'https://ignored.example',
    });
    expect(edited).toMatchObject({ name: 'After', bio: 'edited by gitbeaker', external: true, is_admin: true, website_url: '' });
    const events = await api.events(`user-${user.id}`);
    expect(events.at(-1)).toMatchObject({ type: 'UserProfileUpdated', data: { changes: { name: 'After', bio: 'edited by gitbeaker', external: true, is_admin: true } } });
  });

  it('all follows Link rel="next" across pages', async () => {
    for (const n of [1, 2, 3]) {
      await gitlab.Users.create({ email: `${tag}.page${n}@example.com`, username: `${tag}_page${n}`, name: `Page ${n}`, password: 'password123' });
    }
    const everyone = await gitlab.Users.all({ perPage: 100 });
    const paged = await gitlab.Users.all({ perPage: 2 });
    expect(paged.length).toBe(everyone.length);
    expect(paged.length).toBeGreaterThan(4);
    expect(paged.map((u) => u.id)).toEqual(everyone.map((u) => u.id));
    const { data, paginationInfo } = await gitlab.Users.all({ perPage: 2, maxPages: 1, showExpanded: true });
    expect(data).toHaveLength(2);
    expect(paginationInfo).toMatchObject({ perPage: 2, current: 1, next: 2, previous: null, total: everyone.length });
  });

  it('all with filters: search and username', async () => {
    const found = await gitlab.Users.all({ search: `${tag}_page` });
    expect(found.map((u) => u.username).sort()).toEqual([`${tag}_page1`, `${tag}_page2`, `${tag}_page3`]);
    const one = await gitlab.Users.all({ username: `${tag.toUpperCase()}_PAGE2` });
    expect(one.map((u) => u.username)).toEqual([`${tag}_page2`]);
  });

  it('surfaces GitLab’s errors: 409 conflict, 400 validation, 404', async () => {
    expect(await failure(gitlab.Users.create({ email: `${tag}.one@example.com`, username: `${tag}_x`, name: 'X', password: 'password123' }))).toEqual({
      status: 409,
      description: 'Email has already been taken',
    });
    expect(await failure(gitlab.Users.create({ email: `${tag}.y@example.com`, username: `${tag}_y`, name: 'Y' }))).toEqual({
      status: 400,
      description: 'password, reset_password, force_random_password are missing, at least one parameter must be provided',
    });
    expect(await failure(gitlab.Users.show(999999))).toEqual({ status: 404, description: '404 User Not Found' });
  });

  it('block, unblock and remove', async () => {
    const user = await gitlab.Users.create({ email: `${tag}.rm@example.com`, username: `${tag}_rm`, name: 'Remove', password: 'password123' });
    expect(await gitlab.Users.block(user.id as number)).toBe(true);
    expect((await gitlab.Users.show(user.id as number)).state).toBe('blocked');
    expect(await gitlab.Users.unblock(user.id as number)).toBe(true);
    await gitlab.Users.remove(user.id as number);
    expect((await failure(gitlab.Users.show(user.id as number))).status).toBe(404);
  });

  it('editStatus and showStatus', async () => {
    const status = await gitlab.Users.editStatus({ emoji: 'coffee', message: 'via gitbeaker' });
    expect(status).toEqual({ emoji: 'coffee', message: 'via gitbeaker', message_html: 'via gitbeaker' });
    expect(await gitlab.Users.showStatus()).toEqual(status);
    expect(await gitlab.Users.showStatus({ iDOrUsername: 'root' })).toEqual(status);
    // Clearing answers `null`; gitbeaker turns an empty JSON body into {}.
    expect(await gitlab.Users.editStatus({ emoji: '', message: '' })).toEqual({});
    expect(await gitlab.Users.showStatus()).toEqual({ emoji: null, message: null, message_html: '' });
  });

  it('acts as another user with sudo', async () => {
    const asUser = new Gitlab({ host: api.url, token: api.rootToken, sudo: `${tag}_one`, rateLimits: {} });
    expect((await asUser.Users.showCurrentUser()).username).toBe(`${tag}_one`);
  });
});

describe('UserImpersonationTokens', () => {
  it('create, all, show, revoke', async () => {
    const user = await gitlab.Users.create({ email: `${tag}.imp@example.com`, username: `${tag}_imp`, name: 'Imp', password: 'password123' });
    const userId = user.id as number;
    const created = await gitlab.UserImpersonationTokens.create(userId, 'gitbeaker', ['api', 'read_user'], { expiresAt: '2999-01-01' });
    expect(created).toMatchObject({ name: 'gitbeaker', scopes: ['api', 'read_user'], expires_at: '2999-01-01', active: true, revoked: false, impersonation: true });
    expect(created.token).toEqual(expect.any(String));
    const asUser = new Gitlab({ host: api.url, token: created.token as string, rateLimits: {} });
    expect((await asUser.Users.showCurrentUser()).username).toBe(`${tag}_imp`);

    const all = await gitlab.UserImpersonationTokens.all(userId);
    expect(all.map((t) => t.id)).toEqual([created.id]);
    const { token: _, ...withoutToken } = created;
    expect(await gitlab.UserImpersonationTokens.show(userId, created.id as number)).toEqual(withoutToken);

    await gitlab.UserImpersonationTokens.revoke(userId, created.id as number);
    expect(await gitlab.UserImpersonationTokens.show(userId, created.id as number)).toMatchObject({ revoked: true, active: false });
    expect(await gitlab.UserImpersonationTokens.all(userId, { state: 'active' })).toEqual([]);
    expect((await failure(asUser.Users.showCurrentUser())).status).toBe(401);
  });
});

describe('UserCustomAttributes', () => {
  it('set, show, all, remove; with_custom_attributes on the list', async () => {
    const user = await gitlab.Users.create({ email: `${tag}.ca@example.com`, username: `${tag}_ca`, name: 'Attrs', password: 'password123' });
    const userId = user.id as number;
    expect(await gitlab.UserCustomAttributes.set(userId, 'team', 'blue')).toEqual({ key: 'team', value: 'blue' });
    expect(await gitlab.UserCustomAttributes.show(userId, 'team')).toEqual({ key: 'team', value: 'blue' });
    expect(await gitlab.UserCustomAttributes.all(userId)).toEqual([{ key: 'team', value: 'blue' }]);
    const listed = await gitlab.Users.all({ username: `${tag}_ca`, withCustomAttributes: true });
    expect(listed[0]!.custom_attributes).toEqual([{ key: 'team', value: 'blue' }]);
    await gitlab.UserCustomAttributes.remove(userId, 'team');
    expect(await gitlab.UserCustomAttributes.all(userId)).toEqual([]);
  });
});
