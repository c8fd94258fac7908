import { spawn, type ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshTestStore, itOnPostgres, type TestStore } from '../support/database.js';

// Idempotent writes across a crash (docs/architecture.md, "Idempotent writes"): a real
// `forgelog serve` process is killed with SIGKILL after the write's transaction committed and
// before it answered — by the test hook FORGELOG_TEST_KILL_AFTER_COMMIT_KEY, which makes the
// process kill itself right after committing a request sent with that key. A new process then
// answers the retry with the committed answer, and nothing is written twice.

// A child start costs seconds of CPU (PGlite up to half a minute on a loaded machine).
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const ROOT_TOKEN = 'root-token-for-idempotency-crash-tests';
const CRASH_KEY = 'crash-after-commit';

interface Serve {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function store(): Promise<TestStore> {
  const fresh = await freshTestStore('idempotency');
  cleanups.push(() => fresh.dispose());
  return fresh;
}

/** `forgelog serve` on `database`, once it listens. */
async function serve(database: TestStore, env: Record<string, string> = {}): Promise<Serve> {
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: '0', LOG_LEVEL: 'info', FORGELOG_ROOT_TOKEN: ROOT_TOKEN, FORGELOG_PASSWORD_HASH_COST: '10', ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.FORGELOG_DATA_DIR;
  Object.assign(childEnv, database.env);
  const child = spawn(process.execPath, ['bin/forgelog.js', 'serve'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        try {
          const parsed = JSON.parse(line) as { msg?: string; port?: number };
          if (parsed.msg === 'forgelog listening' && parsed.port) resolve(parsed.port);
        } catch {}
      }
    });
    child.once('exit', () => reject(new Error(`serve exited before listening: ${stderr}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/api/v4`, exited };
}

async function call(server: Serve, method: string, path: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { 'PRIVATE-TOKEN': ROOT_TOKEN, 'content-type': 'application/json' };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? null : JSON.parse(text) };
}

/** The log's length and the environments' rows, read from the database itself (no server on it). */
async function written(database: TestStore, projectId: number) {
  const handle = await database.open();
  try {
    const events = await sql<{ n: string }>`select count(*) as n from events`.execute(handle.db);
    const environments = await sql<{ id: number; name: string }>`select id, name from environments where project_id = ${projectId} order by id`.execute(handle.db);
    const created = await sql<{ n: string }>`select count(*) as n from events where event_type = 'EnvironmentCreated'`.execute(handle.db);
    return { events: Number(events.rows[0]!.n), created: Number(created.rows[0]!.n), environments: environments.rows };
  } finally {
    await handle.close();
  }
}

describe('a crash between the commit and the answer', () => {
  it('answers the retry with the committed answer, and never writes twice', async () => {
    const database = await store();
    const first = await serve(database, { FORGELOG_TEST_KILL_AFTER_COMMIT_KEY: CRASH_KEY });
    const project = await call(first, 'POST', '/projects', { name: 'crash' });
    expect(project.status).toBe(201);

    // The process dies after the commit: the client gets no answer.
    await expect(call(first, 'POST', `/projects/${project.body.id}/environments`, { name: 'production' }, CRASH_KEY)).rejects.toThrow();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const afterCrash = await written(database, project.body.id);
    expect(afterCrash.environments).toEqual([{ id: expect.any(Number), name: 'production' }]);
    expect(afterCrash.created).toBe(1);

    // A new process (the hook still set: a replay commits nothing, so it does not fire).
    const second = await serve(database, { FORGELOG_TEST_KILL_AFTER_COMMIT_KEY: CRASH_KEY });
    const retry = await call(second, 'POST', `/projects/${project.body.id}/environments`, { name: 'production' }, CRASH_KEY);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toMatchObject({ id: afterCrash.environments[0]!.id, name: 'production', slug: 'production', state: 'available' });
    // Without the key the same request is executed, and refused: the name is taken.
    expect((await call(second, 'POST', `/projects/${project.body.id}/environments`, { name: 'production' })).status).toBe(400);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(await written(database, project.body.id)).toEqual(afterCrash);
  });

  itOnPostgres('two processes serving one key concurrently execute it once (the advisory lock on the key)', async () => {
    const database = await store();
    const [a, b] = await Promise.all([serve(database), serve(database)]);
    const project = await call(a, 'POST', '/projects', { name: 'shared' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(i % 2 === 0 ? a : b, 'POST', `/projects/${project.body.id}/environments`, { name: 'canary' }, 'shared-key')),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((r) => r.text)).size).toBe(1);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const after = await written(database, project.body.id);
    expect(after.environments).toEqual([{ id: answers[0]!.body.id, name: 'canary' }]);
  });
});
