import type { Visibility } from '../../src/domain/access.js';
import { addMember, createGroup, createProject } from './fixtures.js';
import type { TestServer } from './server.js';

/**
 * Callers by role, built through the API as a client would (POST /users, POST
 * /users/:id/personal_access_tokens, POST /users/:id/block, POST /groups|projects/:id/members),
 * so a permission matrix names a role, never a token:
 *
 *   const callers = await createCallers(api);
 *   const group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
 *   await grantRoles(api, callers, { groups: group.id });
 *   await api.get(`/groups/${group.id}/members`, { token: callers.guest.token });
 *
 * Members get their level on the one source given (a group or a project); on a group, the
 * roles also reach its subgroups and projects by inheritance.
 */

export const ROLES = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin', 'blocked', 'external'] as const;
export type Role = (typeof ROLES)[number];

/** The member roles and their GitLab access levels. */
export const ROLE_LEVEL = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type MemberRole = keyof typeof ROLE_LEVEL;

export interface Caller {
  readonly role: Role | string;
  /** null: no token sent (anonymous). */
  readonly token: string | null;
  /** The user behind the token (null for anonymous). */
  readonly user: { readonly id: number; readonly username: string } | null;
}

export type Callers = Record<Role, Caller>;

let counter = 0;

/**
 * A caller for every role, none of them a member of anything yet (`grantRoles` gives the
 * member roles their levels): `nonMember` is a plain user, `external` an external one,
 * `admin` an administrator, `blocked` a user blocked after its token was made, `anonymous`
 * sends no token. Tokens have scope `api` unless `scopes` says otherwise.
 */
export async function createCallers(api: TestServer, options: { scopes?: string[]; prefix?: string } = {}): Promise<Callers> {
  const prefix = options.prefix ?? `r${++counter}x${process.pid}`;
  const attributes: Partial<Record<Role, Record<string, unknown>>> = { admin: { admin: true }, external: { external: true } };
  const users = await Promise.all(
    ROLES.filter((role) => role !== 'anonymous').map(async (role) => {
      const created = await api.createUser({ username: `${prefix}-${role.toLowerCase()}`, ...attributes[role] }, options.scopes ?? ['api']);
      return [role, { role, token: created.token, user: { id: created.user.id, username: created.user.username } }] as const;
    }),
  );
  const callers = Object.fromEntries([['anonymous', { role: 'anonymous', token: null, user: null }], ...users]) as Callers;
  const blocked = await api.post(`/users/${callers.blocked.user!.id}/block`);
  if (blocked.status !== 201) throw new Error(`POST /users/:id/block: ${blocked.status} ${blocked.text}`);
  return callers;
}

export type Source = { readonly groups: number } | { readonly projects: number };

/**
 * Adds the member roles to a group or project through the members API, as root: guest,
 * reporter, developer and maintainer always; owner too with `owner: true` (groups only —
 * GitLab projects have no owner members; a project's owner owns its namespace).
 */
export async function grantRoles(api: TestServer, callers: Callers, source: Source, options: { owner?: boolean } = {}): Promise<void> {
  const [kind, id] = 'groups' in source ? (['groups', source.groups] as const) : (['projects', source.projects] as const);
  const roles: MemberRole[] = ['guest', 'reporter', 'developer', 'maintainer', ...(options.owner ? (['owner'] as const) : [])];
  for (const role of roles) await addMember(api, kind, id, callers[role].user!.id, ROLE_LEVEL[role]);
}

/**
 * A source the roles apply to, as GitLab makes them: a group the owner created (its creator
 * is its owner), or a project in a group the owner created (the group's owner owns the
 * project); the other member roles are granted on the group or the project itself.
 */
export async function sourceWithRoles(api: TestServer, callers: Callers, kind: 'groups' | 'projects', visibility: Visibility): Promise<number> {
  const owner = callers.owner.token!;
  const group = await createGroup(api, { token: owner, visibility });
  if (kind === 'groups') {
    await grantRoles(api, callers, { groups: group.id });
    return group.id;
  }
  const project = await createProject(api, { token: owner, group, visibility });
  await grantRoles(api, callers, { projects: project.id });
  return project.id;
}

/** Another token of the caller's user with the given scopes (GitLab 13.6's admin endpoint, as root). */
export async function withScopes(api: TestServer, caller: Caller, scopes: readonly string[]): Promise<Caller> {
  if (!caller.user) throw new Error(`${caller.role} has no user to make a token for`);
  const res = await api.post(`/users/${caller.user.id}/personal_access_tokens`, { name: `scoped ${scopes.join(' ')}`, scopes });
  if (res.status !== 201) throw new Error(`POST /users/:id/personal_access_tokens: ${res.status} ${res.text}`);
  return { role: `${caller.role} with ${scopes.join(', ')}`, token: res.body.token, user: caller.user };
}
