import type { Visibility } from '../../src/domain/access.js';
import type { TestServer } from './server.js';

/**
 * Groups and projects for tests of areas that live inside them, made through the API
 * (POST /groups, POST /projects) as any client would: fixtures never write read tables.
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
  /** A README.md committed on the default branch (master). */
  initialize_with_readme?: boolean;
}

export async function createProject(api: TestServer, options: ProjectOptions = {}): Promise<ProjectFixture> {
  const path = options.path ?? unique('project');
  const body: Record<string, unknown> = { name: options.name ?? path, path, visibility: options.visibility ?? 'private' };
  if (options.group) body.namespace_id = options.group.id;
  if (options.request_access_enabled !== undefined) body.request_access_enabled = options.request_access_enabled;
  if (options.initialize_with_readme !== undefined) body.initialize_with_readme = options.initialize_with_readme;
  const res = await api.post('/projects', body, { token: options.token ?? api.rootToken });
  if (res.status !== 201) throw new Error(`POST /projects: ${res.status} ${res.text}`);
  return res.body;
}

/** A membership, added by root (the creator of fixtures) through the members API; the member entity it answers. */
export async function addMember(api: TestServer, kind: 'groups' | 'projects', sourceId: number, userId: number, accessLevel: number) {
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

/** Waits for an asynchronous reactor's work. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
