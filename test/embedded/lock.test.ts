import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/database/database.js';
import { StartupError } from '../../src/config.js';
import { LOCK_FILE } from '../../src/database/embedded-lock.js';
import { childEnv, freshDataDir, runForgelog, startServe, stopServe } from './support.js';

const dirs: string[] = [];
const fresh = (label: string) => {
  const dir = freshDataDir(label);
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A pid that belonged to a process which has ended. */
function deadPid(): number {
  const ended = spawnSync(process.execPath, ['-e', '0']);
  return ended.pid;
}

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number; command: string };

describe('the embedded data directory lock', () => {
  it('refuses a second process while forgelog serve runs, with one line naming it; a stopped or killed server leaves the directory usable', async () => {
    const dir = fresh('two-processes');
    const env = childEnv(dir, { FORGELOG_ROOT_TOKEN: 'root-token-of-two-processes' });
    const first = await startServe(env);
    try {
      expect(lockOf(dir)).toMatchObject({ pid: first.child.pid, command: 'forgelog serve' });

      const refused = runForgelog(['token', '--user', 'root'], env);
      expect(refused.status).not.toBe(0);
      expect(refused.stdout).toBe('');
      const lines = refused.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`the embedded database in ${dir} is in use by forgelog serve (pid ${first.child.pid})`);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
      // Reporting commands too: every command opens the database through the lock.
      const verify = runForgelog(['events', 'verify'], env);
      expect(verify.status).not.toBe(0);
      expect(verify.stderr).toContain(`is in use by forgelog serve (pid ${first.child.pid})`);
    } finally {
      // Killed: the lock file stays behind with a dead pid, and is taken over.
      await stopServe(first, 'SIGKILL');
    }
    expect(lockOf(dir).pid).toBe(first.child.pid);

    const minted = runForgelog(['token', '--user', 'root', '--name', 'after-the-server'], env);
    expect(minted.stderr).toBe('');
    expect(minted.status).toBe(0);
    const token = minted.stdout.trim();
    expect(token).toMatch(/^\S{20,}$/);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);

    const second = await startServe(env);
    try {
      const response = await fetch(`http://127.0.0.1:${second.port}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': token } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { username: string }).username).toBe('root');
    } finally {
      await stopServe(second);
    }
    // Stopped cleanly: the lock is released.
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 300_000);

  it('takes over a lock file whose process is dead', async () => {
    const dir = fresh('stale');
    mkdirSync(dir, { recursive: true });
    const pid = deadPid();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, command: 'forgelog serve' }));
    const handle = await openDatabase({ dataDir: dir });
    try {
      expect(lockOf(dir).pid).toBe(process.pid);
    } finally {
      await handle.close();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('takes over a lock left with this very pid by an earlier process (a restarted container), and an unreadable one', async () => {
    for (const content of [JSON.stringify({ pid: process.pid, command: 'forgelog serve', startTime: '1' }), 'not a lock']) {
      const dir = fresh('reused-pid');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, LOCK_FILE), content);
      const handle = await openDatabase({ dataDir: dir });
      expect(lockOf(dir).pid).toBe(process.pid);
      await handle.close();
    }
  });

  it('refuses a second opening in the same process', async () => {
    const dir = fresh('same-process');
    const handle = await openDatabase({ dataDir: dir });
    try {
      const second = openDatabase({ dataDir: dir });
      await expect(second).rejects.toThrow(StartupError);
      await expect(second).rejects.toThrow(`the embedded database in ${dir} is in use by this process (pid ${process.pid})`);
    } finally {
      await handle.close();
    }
    // Released: it opens again.
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  });

  it('refuses a data directory it cannot write with one line, from the command too', async () => {
    // root writes through file modes: a directory of a read-only filesystem stands in for it.
    const asRoot = process.getuid?.() === 0;
    const dir = asRoot ? '/sys/forgelog-test-data' : fresh('read-only');
    if (!asRoot) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o500);
    }
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(new RegExp(`^the embedded database directory ${dir} is not writable \\((EACCES|EPERM|EROFS)\\)`));
    const migrate = runForgelog(['migrate'], childEnv(dir));
    expect(migrate.status).not.toBe(0);
    expect(migrate.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^forgelog: the embedded database directory ${dir} is not writable`))]);
    if (!asRoot) chmodSync(dir, 0o700);
  });
});
