/** The parent side of the load generator (bench/loadgen.ts, a child process running autocannon). */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadMessage, LoadResult } from '../loadgen.js';
import { CONNECTIONS } from './settings.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: LoadResult & { rss: number }) => void; reject: (e: Error) => void }>();
  private constructor(readonly child: ChildProcess) {
    child.on('message', (message: { id?: number; result?: LoadResult; rss?: number; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if (message.error) waiter.reject(new Error(`load generator: ${message.error}`));
      else waiter.resolve({ ...message.result!, rss: message.rss ?? 0 });
    });
    child.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`load generator exited (${code})`));
      this.waiting.clear();
    });
  }

  static start(): Promise<LoadGenerator> {
    const child = fork(join(HERE, '..', 'loadgen.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('load generator did not start')), 30_000);
      child.once('message', () => {
        clearTimeout(timer);
        resolve(new LoadGenerator(child));
      });
      child.once('error', reject);
    });
  }

  run(job: LoadJob, key?: string): Promise<LoadResult & { rss: number }> {
    return this.send(job.seconds + 30, (id) => ({ id, job, ...(key === undefined ? {} : { key }) }));
  }

  /** Merges the slices run under `key` into one result. */
  collect(key: string, url: string, connections = CONNECTIONS): Promise<LoadResult & { rss: number }> {
    return this.send(30, (id) => ({ id, collect: key, url, connections }));
  }

  private send(timeoutSeconds: number, message: (id: number) => LoadMessage): Promise<LoadResult & { rss: number }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`load job timed out after ${timeoutSeconds} s`));
      }, timeoutSeconds * 1000);
      this.waiting.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.child.send(message(id));
    });
  }

  stop() {
    if (this.child.exitCode === null) this.child.kill();
  }
}
