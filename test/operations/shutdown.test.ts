import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { freshTestStore } from '../support/database.js';

// A child process starts in seconds on PostgreSQL, and in up to half a minute on PGlite on
// a loaded machine: the tests get room for that (they assert no timings).

/**
 * Graceful shutdown (issue 8, item 13) of a real `forgelog serve` process: requests in
 * flight when SIGTERM or SIGINT arrives are answered, then the workers, locks and pools are
 * closed, each step logged, and the process exits 0.
 *
 * "In flight" without timing: each request says `Expect: 100-continue`, so the server's
 * "100 Continue" proves it has the request; its body is sent only after the signal.
 */

const ROOT_TOKEN = 'root-token-for-shutdown-tests';

interface Serve {
  child: ChildProcess;
  port: number;
  logs: { msg?: string; [key: string]: unknown }[];
  waitForLog(msg: string): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `forgelog serve` on a fresh database of its own (a PostgreSQL clone or a PGlite copy). */
async function startServe(env: Record<string, string> = {}): Promise<Serve> {
  const store = await freshTestStore('serve');
  cleanups.push(() => store.dispose());
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: '0', LOG_LEVEL: 'info', FORGELOG_ROOT_TOKEN: ROOT_TOKEN, ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.FORGELOG_DATA_DIR;
  Object.assign(childEnv, store.env);
  const child = spawn(process.execPath, ['bin/forgelog.js', 'serve'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs: Serve['logs'] = [];
  const waiters: { msg: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const text of lines) {
      let line: Serve['logs'][number];
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      logs.push(line);
      for (const waiter of waiters.filter((w) => w.msg === line.msg)) waiter.resolve(line);
    }
  });
  const waitForLog = (msg: string) => {
    const seen = logs.find((line) => line.msg === msg);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      waiters.push({ msg, resolve });
      void exited.then((code) => reject(new Error(`forgelog serve exited (${code}) before logging "${msg}": ${stderr}`)));
    });
  };
  const listening = await waitForLog('forgelog listening');
  return { child, port: listening.port as number, logs, waitForLog, exited };
}

/** A POST whose body waits: resolves `inFlight` once the server has the request. */
function heldPost(port: number, path: string, body: unknown) {
  const payload = JSON.stringify(body);
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: `/api/v4${path}`,
    headers: { 'PRIVATE-TOKEN': ROOT_TOKEN, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), expect: '100-continue' },
  });
  const inFlight = new Promise<void>((resolve) => request.once('continue', () => resolve()));
  const answer = new Promise<{ status: number; body: any } | { error: string }>((resolve) => {
    request.once('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null }));
      response.on('error', (error) => resolve({ error: error.message }));
    });
    request.once('error', (error) => resolve({ error: error.message }));
  });
  return { inFlight, answer, send: () => request.end(payload) };
}

describe('forgelog serve on SIGTERM or SIGINT', () => {
  it('answers every request in flight, stops the workers and the database, logs each step and exits 0', async () => {
    const serve = await startServe();
    const posts = Array.from({ length: 8 }, (_, i) => {
      const username = `inflight${i}`;
      return heldPost(serve.port, '/users', { email: `${username}@example.com`, username, name: username, password: 'password123', skip_confirmation: true });
    });
    await Promise.all(posts.map((p) => p.inFlight));

    serve.child.kill('SIGTERM');
    const stopping = await serve.waitForLog('shutting down: stopped accepting connections');
    expect(stopping).toMatchObject({ signal: 'SIGTERM', in_flight: 8 });
    // No new connections from now on.
    await expect(fetch(`http://127.0.0.1:${serve.port}/-/health`)).rejects.toThrow();

    for (const post of posts) post.send();
    const answers = await Promise.all(posts.map((p) => p.answer));
    expect(answers.map((a) => ('status' in a ? a.status : a.error))).toEqual(Array(8).fill(201));
    expect(answers.map((a) => ('body' in a ? a.body.username : undefined)).sort()).toEqual(posts.map((_, i) => `inflight${i}`).sort());

    expect(await serve.exited).toBe(0);
    const steps = serve.logs.map((line) => line.msg).filter((msg) => typeof msg === 'string' && !msg.startsWith('forgelog listening'));
    expect(steps.filter((msg) => msg !== undefined && !msg.startsWith('created the administrator'))).toEqual([
      'shutting down: stopped accepting connections',
      'answered every request in flight',
      'closed the HTTP server',
      'stopped the sealer',
      'stopped the delivery sender',
      'stopped the projections and reactors between two batches; released their advisory locks',
      'closed the database',
      'shut down',
    ]);
  }, 180_000);

  it('closes what is still in flight after the grace period, then exits 0', async () => {
    const serve = await startServe({ FORGELOG_SHUTDOWN_GRACE_MS: '200' });
    const hanging = heldPost(serve.port, '/users', { username: 'never-sent' });
    await hanging.inFlight;

    serve.child.kill('SIGINT');
    expect(await serve.waitForLog('shutting down: stopped accepting connections')).toMatchObject({ signal: 'SIGINT', in_flight: 1, grace_ms: 200 });
    expect(await serve.waitForLog('grace period over; closing the connections of the requests still in flight')).toMatchObject({ in_flight: 1 });
    expect(await hanging.answer).toHaveProperty('error');
    expect(await serve.exited).toBe(0);
    expect(serve.logs.map((line) => line.msg)).toContain('shut down');
  }, 180_000);
});
