import type { ServerType } from '@hono/node-server';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import { listen, openRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { openTestDatabase } from './database.js';
import { TEST_DATA_DIR } from './global-setup.js';
import { describeMismatches, replayLog, type ReplayPlan } from './replay.js';
import { checkDocumentedDeclarations } from '../../src/http/kernel/documented.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string | null;
  query?: Record<string, string | number | boolean | (string | number)[]>;
  body?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  apiUrl: string;
  runtime: Runtime;
  handle: DatabaseHandle;
  rootToken: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  get<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  del<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Creates a user through the API and returns it with a personal access token (scope api). */
  createUser(attributes?: Record<string, unknown>, scopes?: string[]): Promise<{ user: any; token: string }>;
  /** The events of a stream, straight from the log. */
  events(streamId: string): Promise<{ type: string; data: any; metadata: any }[]>;
  /** A project's repository events, of every ref's stream (and of the project's stream of old), in log order. */
  repositoryEvents(projectId: number): Promise<{ type: string; data: any; metadata: any }[]>;
  close(): Promise<void>;
}

export interface TestServerOptions extends Pick<RuntimeOptions, 'now' | 'deliveries' | 'logger' | 'replicate'> {
  /**
   * `false`: close() does not replay the server's log (checkReplays). Only for a server whose
   * read tables legitimately differ from any replay of its log, or whose log costs minutes to
   * replay; say why (and what it measured) where it is passed.
   */
  replayCheck?: false;
}

let userCounter = 0;

/**
 * A real forgelog over HTTP on its own fresh database. Its close() first replays the
 * server's own log twice and interleaved (checkReplays), and throws when a replay leaves
 * other rows than the inline path wrote.
 */
export async function startTestServer(overrides: Partial<Config> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const { replayCheck, ...runtimeOptions } = options;
  // A documented route must parse what its OpenAPI documentation says it does.
  checkDocumentedDeclarations();
  const handle = await openTestDatabase();
  const config: Config = { ...loadConfig({}), port: 0, logLevel: 'silent', rootToken: 'root-token-for-tests', ...overrides };
  const runtime = await openRuntime(config, { handle, logger: pino({ level: process.env.FORGELOG_TEST_LOG_LEVEL ?? 'silent' }), migrate: false, ...runtimeOptions });
  const { server, port } = await listen(runtime, 0);
  const url = `http://127.0.0.1:${port}`;
  (runtime.config as { externalUrl: string }).externalUrl = overrides.externalUrl ?? url;
  const rootToken = config.rootToken!;

  async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const target = new URL(path.startsWith('/-/') ? `${url}${path}` : `${url}/api/v4${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (Array.isArray(value)) for (const v of value) target.searchParams.append(`${key}[]`, String(v));
      else target.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? rootToken : options.token;
    if (token !== null) headers['PRIVATE-TOKEN'] = token;
    let body: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(target, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {}
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  const server_: TestServer = {
    url,
    apiUrl: `${url}/api/v4`,
    runtime,
    handle,
    rootToken,
    request,
    get: (path, options) => request('GET', path, options),
    post: (path, body, options) => request('POST', path, { ...options, body: body ?? options?.body }),
    put: (path, body, options) => request('PUT', path, { ...options, body: body ?? options?.body }),
    del: (path, options) => request('DELETE', path, options),
    async createUser(attributes = {}, scopes = ['api']) {
      const n = ++userCounter;
      const username = (attributes.username as string | undefined) ?? `user${n}_${process.pid}`;
      const created = await request<any>('POST', '/users', {
        body: { email: `${username}@example.com`, username, name: `User ${n}`, password: 'password123', skip_confirmation: true, ...attributes },
      });
      if (created.status !== 201) throw new Error(`createUser failed: ${created.status} ${created.text}`);
      const token = await request<any>('POST', `/users/${created.body.id}/personal_access_tokens`, { body: { name: 'test', scopes } });
      if (token.status !== 201) throw new Error(`token failed: ${token.status} ${token.text}`);
      return { user: created.body, token: token.body.token };
    },
    async events(streamId) {
      const rows = await handle.db.selectFrom('events').select(['event_type', 'data', 'metadata']).where('stream_id', '=', streamId).orderBy('stream_version').execute();
      return rows.map((r) => ({ type: r.event_type, data: r.data, metadata: r.metadata }));
    },
    async repositoryEvents(projectId) {
      const rows = await handle.db
        .selectFrom('events')
        .select(['event_type', 'data', 'metadata'])
        .where((eb) => eb.or([eb('stream_id', '=', `repository-${projectId}`), eb('stream_id', 'like', `repository-${projectId}:%`)]))
        .orderBy('global_position')
        .execute();
      return rows.map((r) => ({ type: r.event_type, data: r.data, metadata: r.metadata }));
    },
    async close() {
      await new Promise<void>((resolve) => (server as ServerType).close(() => resolve()));
      try {
        if (replayCheck !== false) await checkReplays(runtime);
      } finally {
        await runtime.close();
      }
    },
  };
  return server_;
}

/** The server check's replays: after each event, an earlier one of its stream chosen by position; pages of an odd size, so that an event and its copy sometimes fall on two pages. */
const SERVER_REPLAYS: ReplayPlan = { pickEarlier: (index, count) => (index * 7) % count, batchSize: 101 };
let replayChecks = 0;

/**
 * Issue 21 §5: the server's own log, replayed every event twice, interleaved and in doubled
 * batches (replayLog), leaves the rows its inline path wrote. Which projectors saw events (and
 * what the check cost) goes to .test-data/replay-coverage/, so that a run shows which ones no
 * suite exercises.
 */
async function checkReplays(runtime: Runtime): Promise<void> {
  // A worker a test has stopped follows nothing more: the state it left is the one to check.
  const worker = runtime.worker;
  if (worker && (await worker.lag()).some((f) => f.state !== 'stopped')) await worker.waitUntilCaughtUp({ timeoutMs: 30_000 });
  const started = performance.now();
  const report = await replayLog(runtime.handle, SERVER_REPLAYS);
  const milliseconds = Math.round(performance.now() - started);
  const dir = join(TEST_DATA_DIR, 'replay-coverage');
  mkdirSync(dir, { recursive: true });
  const coverage = { file: expect.getState().testPath, events: report.events, milliseconds, exercised: report.exercised };
  writeFileSync(join(dir, `${process.pid}-${++replayChecks}.json`), JSON.stringify(coverage));
  if (report.mismatches.length > 0) throw new Error(`replaying this server's log leaves other rows than its inline path wrote:\n${describeMismatches(report.mismatches)}`);
}

/**
 * Runs `run` with the running server answering as on `plan` (its configuration switched in
 * place), then puts its own plan back, also when `run` fails.
 */
export async function onPlan<T>(api: TestServer, plan: Config['plan'], run: () => Promise<T>): Promise<T> {
  const config = api.runtime.config as { plan: Config['plan'] };
  const own = config.plan;
  config.plan = plan;
  try {
    return await run();
  } finally {
    config.plan = own;
  }
}
