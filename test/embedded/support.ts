import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TEST_DATABASE_DIR } from '../support/global-setup.js';

export const BIN = resolve('bin/forgelog.js');

/** A fresh path for a data directory (not created) under the test databases' directory. */
export function freshDataDir(label: string): string {
  mkdirSync(TEST_DATABASE_DIR, { recursive: true });
  return join(TEST_DATABASE_DIR, `${label}-${randomBytes(5).toString('hex')}`);
}

/** Environment of a forgelog child process on the embedded database in dataDir. */
export function childEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, FORGELOG_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', ...extra };
  delete env.DATABASE_URL;
  return env;
}

/** Runs a forgelog command to its end. */
export function runForgelog(args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface ServeProcess {
  child: ChildProcess;
  /** Every log line so far. */
  lines: string[];
  port: number;
}

/** `forgelog serve` as a child process; resolves once it listens. */
export function startServe(env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  return new Promise((resolvePromise, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (line.includes('"forgelog listening"')) resolvePromise({ child, lines, port: (JSON.parse(line) as { port: number }).port });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`forgelog serve exited with ${code}: ${lines.join('\n')}${buffered}`)));
  });
}

export function stopServe(serve: ServeProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (serve.child.exitCode !== null || serve.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    serve.child.once('exit', () => resolvePromise());
    serve.child.kill(signal);
  });
}
