/**
 * The black-box phase's processes: forgelog started exactly as `npm start` starts it
 * (`node bin/forgelog.js serve`, configured by DATABASE_URL, PORT and FORGELOG_ROOT_TOKEN as
 * the README documents), and the bare server (bench/bare-server.ts). What the bench reads of
 * them is what anyone can read of a process: /proc/<pid>/status and /proc/<pid>/stat.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from '../harness/meters.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  base: string;
  /** Stops the process (SIGTERM, then SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1 (the server binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    }));
}

/** Polls `url` until it answers (any status), at most `seconds`. */
async function answering(url: string, child: ChildProcess, seconds: number, output: () => string): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}: ${output().slice(-3000)}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer within ${seconds} s: ${output().slice(-3000)}`);
}

/**
 * The environment `npm start` gives the server: the assignments that lead package.json's start
 * script (MALLOC_ARENA_MAX), whose command must be the one the bench runs.
 */
export function startScriptEnv(): Record<string, string> {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const match = /^((?:\w+=\S+\s+)*)node bin\/forgelog\.js serve$/.exec(start);
  if (!match) throw new Error(`package.json's start script is not \`[NAME=value …] node bin/forgelog.js serve\`: ${start}`);
  return Object.fromEntries(match[1]!.trim().split(/\s+/).filter(Boolean).map((assignment) => [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]));
}

/**
 * `node bin/forgelog.js serve` on the given database, in the environment `npm start` gives it. Its log (one line per request at the
 * default level, as users run it) goes to a file, as a service manager would keep it; the
 * file is removed when the server stops, its tail printed if the server failed.
 */
export async function startForgelog(databaseUrl: string, rootToken: string): Promise<ServerProcess> {
  const port = await freePort();
  const logFile = join(tmpdir(), `forgelog-bench-serve-${process.pid}-${port}.log`);
  const fd = openSync(logFile, 'w');
  const env: NodeJS.ProcessEnv = { ...process.env, ...startScriptEnv(), DATABASE_URL: databaseUrl, PORT: String(port), FORGELOG_ROOT_TOKEN: rootToken, FORGELOG_HOST: '127.0.0.1' };
  for (const key of Object.keys(env)) if (key.startsWith('BENCH_')) delete env[key];
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'forgelog.js'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const output = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const base = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await answering(`${base}/api/v4/version`, child, 120, output);
  } catch (error) {
    await stop();
    rmSync(logFile, { force: true });
    throw error;
  }
  log(`forgelog serve: pid ${child.pid}, ${base} (log: ${logFile})`);
  return {
    name: 'forgelog',
    child,
    pid: child.pid!,
    base,
    stop: async () => {
      await stop();
      if (child.exitCode !== 0 && child.signalCode === null) log(`forgelog serve exited with ${child.exitCode}: ${output().slice(-2000)}`);
      rmSync(logFile, { force: true });
    },
  };
}

/** The bare server (bench/bare-server.ts) on the same database, with a pool of `poolSize`. */
export async function startBare(databaseUrl: string, poolSize: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'bare-server.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', BARE_POOL: String(poolSize) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}: ${output.slice(-2000)}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  log(`bare server: pid ${child.pid}, http://127.0.0.1:${port}`);
  return { name: 'bare', child, pid: child.pid!, base: `http://127.0.0.1:${port}`, stop: stopper(child) };
}

/** VmHWM (the kernel's peak RSS of the process) and VmRSS (now), in MB. */
export function memoryOf(pid: number): { peakMb: number; rssMb: number } {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { peakMb: Math.round(kb('VmHWM') / 1024), rssMb: Math.round(kb('VmRSS') / 1024) };
  } catch {
    return { peakMb: NaN, rssMb: NaN };
  }
}
