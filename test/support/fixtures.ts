import { sql } from 'kysely';
import { addMember } from '../../src/commands/members.js';
import type { Visibility } from '../../src/domain/access.js';
import type { TestServer } from './server.js';

/**
 * Groups and projects for tests of areas that live inside them. They go through the API
 * (POST /groups, POST /projects); where an endpoint is not there yet, rows are written
 * straight into the read tables (with the creator's membership through the members command).
 */

export interface GroupFixture {
  id: number;
  name: string;
  path: string;
  full_path: string;
  visibility: Visibility;
}

export interface ProjectFixture {
  id: number;
  name: string;
  path: string;
  path_with_namespace: string;
  namespace_id: number;
  visibility: Visibility;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}-${process.pid}`;

export interface GroupOptions {
  /** The creator (becomes owner); root when omitted. */
  token?: string;
  path?: string;
  name?: string;
  parent?: { id: number };
  visibility?: Visibility;
  request_access_enabled?: boolean;
}

export async function createGroup(api: TestServer, options: GroupOptions = {}): Promise<GroupFixture> {
  const path = options.path ?? unique('group');
  const body: Record<string, unknown> = { name: options.name ?? path, path, visibility: options.visibility ?? 'private' };
  if (options.parent) body.parent_id = options.parent.id;
  if (options.request_access_enabled !== undefined) body.request_access_enabled = options.request_access_enabled;
  const res = await api.post('/groups', body, { token: options.token ?? api.rootToken });
  if (res.status !== 201) throw new Error(`POST /groups: ${res.status} ${res.text}`);
  return res.body;
}

export interface ProjectOptions {
  /** The creator; root when omitted. */
  token?: string;
  path?: string;
  name?: string;
  /** The group to create it in; the creator's personal namespace when omitted. */
  group?: { id: number };
  visibility?: Visibility;
  request_access_enabled?: boolean;
}

export async function createProject(api: TestServer, options: ProjectOptions = {}): Promise<ProjectFixture> {
  const path = options.path ?? unique('project');
  const body: Record<string, unknown> = { name: options.name ?? path, path, visibility: options.visibility ?? 'private' };
  if (options.group) body.namespace_id = options.group.id;
  if (options.request_access_enabled !== undefined) body.request_access_enabled = options.request_access_enabled;
  const token = options.token ?? api.rootToken;
  const res = await api.post('/projects', body, { token });
  if (res.status === 201) return res.body;
  if (res.status !== 404 || res.body?.error !== '404 Not Found') throw new Error(`POST /projects: ${res.status} ${res.text}`);
  return insertProjectRow(api, token, { ...options, path, name: options.name ?? path });
}

/** Until POST /projects exists: the read-table row and GitLab 12's creator membership. */
async function insertProjectRow(api: TestServer, token: string, options: ProjectOptions & { path: string; name: string }): Promise<ProjectFixture> {
  const db = api.handle.db;
  const me = await api.get('/user', { token });
  const creatorId: number = me.body.id;
  const namespace = options.group
    ? await db.selectFrom('namespaces').selectAll().where('id', '=', options.group.id).executeTakeFirstOrThrow()
    : await db.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', creatorId).executeTakeFirstOrThrow();
  const { rows } = await sql<{ id: string }>`select nextval('projects_id_seq') as id`.execute(db);
  const id = Number(rows[0]!.id);
  const now = new Date().toISOString();
  const visibility = options.visibility ?? 'private';
  await db
    .insertInto('projects')
    .values({
      id,
      namespace_id: namespace.id,
      creator_id: creatorId,
      name: options.name,
      path: options.path,
      name_with_namespace: `${namespace.full_name} / ${options.name}`,
      path_with_namespace: `${namespace.full_path}/${options.path}`,
      description: null,
      default_branch: null,
      visibility,
      archived: false,
      tag_list: [],
      issues_enabled: true,
      merge_requests_enabled: true,
      wiki_enabled: true,
      jobs_enabled: true,
      snippets_enabled: true,
      container_registry_enabled: true,
      shared_runners_enabled: true,
      lfs_enabled: true,
      public_jobs: true,
      request_access_enabled: options.request_access_enabled ?? true,
      star_count: 0,
      forks_count: 0,
      open_issues_count: 0,
      avatar_url: null,
      traversal_ids: namespace.traversal_ids,
      settings: '{}',
      pending_delete: false,
      created_at: now,
      last_activity_at: now,
      updated_at: now,
      stream_version: 1,
    })
    .execute();
  // GitLab 12 (Projects::CreateService): a personal project's owner becomes its maintainer.
  if (namespace.kind === 'user') {
    await addMember(api.runtime.app.commands, { type: 'Project', id }, creatorId, 40, null, { actor_id: creatorId });
  }
  return { id, name: options.name, path: options.path, path_with_namespace: `${namespace.full_path}/${options.path}`, namespace_id: namespace.id, visibility };
}

/** Adds a member through the API as root (the creator of fixtures). */
export async function addMemberAs(api: TestServer, kind: 'groups' | 'projects', sourceId: number, userId: number, accessLevel: number) {
  const res = await api.post(`/${kind}/${sourceId}/members`, { user_id: userId, access_level: accessLevel });
  if (res.status !== 201) throw new Error(`POST /${kind}/${sourceId}/members: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Waits until the server's in-process worker has finished its start-up work: a projection
 * without a checkpoint (a fresh test database) is rebuilt and swapped in at start, and on
 * PostgreSQL that swap's table locks can deadlock with the first requests.
 */
export async function settled(api: TestServer, timeoutMs = 20_000): Promise<void> {
  const worker = api.runtime.worker;
  if (!worker) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lag = await worker.lag();
    if (lag.every((f) => f.state !== 'idle' && f.state !== 'rebuilding')) return;
    if (Date.now() > deadline) throw new Error(`worker not settled: ${lag.map((f) => `${f.name}=${f.state}`).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
