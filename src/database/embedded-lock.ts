import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { StartupError } from '../config.js';

/**
 * One process per embedded data directory. PGlite is PostgreSQL in single-user mode inside
 * this process: nothing stops a second process from opening the same files, and the two
 * overwrite each other's pages (a token minted by the CLI while `forgelog serve` ran was never
 * seen by the server and was gone after its restart). So the directory is locked: a lock
 * file holding the owner's pid (and, on Linux, the pid's start time, so a pid reused by an
 * unrelated process after a crash is not taken for the owner). A lock whose owner is dead is
 * stale and taken over. Every other opener is refused with one line naming the owner.
 */
export const LOCK_FILE = 'forgelog.lock';

interface LockOwner {
  pid: number;
  command: string;
  /** /proc/<pid>/stat's start time (clock ticks since boot), when the platform has it. */
  startTime?: string | undefined;
}


const held = new Set<string>();

/**
 * Takes the data directory's lock (creating the directory), or throws an
 * StartupError naming the process that holds it. Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const key = resolve(path);
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw notWritable(dataDir, error);
  }
  const mine: LockOwner = { pid: process.pid, command: describeThisProcess(), startTime: startTimeOf(process.pid) };
  // Written aside and linked into place: the lock appears whole or not at all.
  const draft = `${path}.${process.pid}`;
  try {
    writeFileSync(draft, JSON.stringify(mine));
  } catch (error) {
    throw notWritable(dataDir, error);
  }
  try {
    return acquire(dataDir, path, key, draft);
  } finally {
    unlinkQuietly(draft);
  }
}

function acquire(dataDir: string, path: string, key: string, draft: string): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      linkSync(draft, path);
      held.add(key);
      const releaseOnExit = () => release();
      process.on('exit', releaseOnExit);
      let released = false;
      function release() {
        if (released) return;
        released = true;
        process.off('exit', releaseOnExit);
        held.delete(key);
        // Only our own lock: a process that took over a lock it believed stale keeps its own.
        if (readOwner(path)?.pid === process.pid) unlinkQuietly(path);
      }
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(dataDir, error);
    }
    const text = readText(path);
    if (text === undefined) continue; // released between our attempt and the read: try again
    const owner = parseOwner(text);
    if (owner && isAlive(owner, key)) throw inUse(dataDir, owner);
    takeOver(path, text);
  }
  throw new StartupError(`the embedded database in ${dataDir} is being opened by another process at the same time; try again`);
}

/**
 * Moves a stale lock aside. Two processes may find the same stale lock: the one that moved a
 * lock it did not read (the other's fresh one) puts it back, and its next attempt sees it.
 */
function takeOver(path: string, staleText: string): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // gone already: the next attempt creates it
  }
  if (readText(aside) !== staleText) {
    try {
      renameSync(aside, path);
    } catch {
      /* the holder's lock is lost only if it is gone already */
    }
    return;
  }
  unlinkQuietly(aside);
}

function isAlive(owner: LockOwner, key: string): boolean {
  if (owner.pid === process.pid) {
    // Ours only if this process took it; otherwise an earlier process had the same pid (a
    // container's pid 1 restarted) — unless the start time says it is this very process.
    if (held.has(key)) return true;
    return owner.startTime !== undefined && owner.startTime === startTimeOf(process.pid);
  }
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: no such process
  }
  const now = startTimeOf(owner.pid);
  return owner.startTime === undefined || now === undefined || now === owner.startTime;
}

function inUse(dataDir: string, owner: LockOwner): StartupError {
  const who = owner.pid === process.pid ? `this process (pid ${owner.pid})` : `${owner.command} (pid ${owner.pid})`;
  return new StartupError(
    `the embedded database in ${dataDir} is in use by ${who}: it holds ${join(dataDir, LOCK_FILE)}. ` +
      'Stop that process first (or use the HTTP API it serves); to run several processes on one database, use PostgreSQL (DATABASE_URL)',
  );
}

function notWritable(dataDir: string, error: unknown): StartupError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  const reason = code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'is not writable' : 'cannot be used';
  return new StartupError(`the embedded database directory ${dataDir} ${reason} (${code}); set FORGELOG_DATA_DIR to a writable directory`);
}

function describeThisProcess(): string {
  const script = process.argv[1] ? basename(process.argv[1]) : '';
  if (script.startsWith('forgelog')) return ['forgelog', ...process.argv.slice(2).filter((arg) => !arg.startsWith('-')).slice(0, 2)].join(' ');
  return `node ${script || '(no script)'}`.trim();
}

/** The 22nd field of /proc/<pid>/stat (after the parenthesised command, which may hold spaces). */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as Partial<LockOwner>;
    return Number.isInteger(owner.pid) && (owner.pid as number) > 0 ? { pid: owner.pid!, command: String(owner.command ?? 'a process'), startTime: owner.startTime } : undefined;
  } catch {
    return undefined; // half-written or foreign: treated as stale
  }
}

function readOwner(path: string): LockOwner | undefined {
  const text = readText(path);
  return text === undefined ? undefined : parseOwner(text);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}
