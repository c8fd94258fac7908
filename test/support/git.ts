import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Packet, PktLineReader } from '../../src/domain/repository/pkt-line.js';

/**
 * The real git (/usr/bin/git, 2.39) for the git HTTP tests, in a scratch directory of its own
 * (its HOME): no system config, no prompt for a password, the C locale, a committer. `env`
 * adds to that environment (GIT_SMART_HTTP=0 makes git use the dumb protocol).
 */
export interface GitScratch {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  /** git's stdout; a failing git rejects. */
  git(args: string[], cwd?: string, env?: Record<string, string>): Promise<string>;
  /** git's exit code and its stderr (what the user reads), failing or not. */
  result(args: string[], cwd: string): Promise<{ code: number; stderr: string }>;
  /** A new path under the scratch directory. */
  newDir(): string;
  remove(): void;
}

const run = promisify(execFile);
const MAX_BUFFER = 256 * 1024 * 1024;

export function gitScratch(prefix: string, env: Record<string, string> = {}): GitScratch {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const gitEnv: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_AUTHOR_NAME: 'Ada Pusher',
    GIT_AUTHOR_EMAIL: 'ada@example.com',
    GIT_COMMITTER_NAME: 'Ada Pusher',
    GIT_COMMITTER_EMAIL: 'ada@example.com',
    ...env,
  };
  let dirs = 0;
  return {
    dir,
    env: gitEnv,
    git: async (args, cwd = dir, more = {}) => (await run('/usr/bin/git', args, { cwd, env: { ...gitEnv, ...more }, maxBuffer: MAX_BUFFER })).stdout,
    result: async (args, cwd) => {
      try {
        const { stderr } = await run('/usr/bin/git', args, { cwd, env: gitEnv, maxBuffer: MAX_BUFFER });
        return { code: 0, stderr };
      } catch (error) {
        const failed = error as { code: number; stderr: string };
        return { code: failed.code, stderr: failed.stderr };
      }
    },
    newDir: () => join(dir, `repo-${++dirs}`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The URL with a token as the password (any username, as GitLab accepts). */
export const withToken = (url: string, token: string, username = 'anyone') => url.replace('://', `://${username}:${token}@`);

/** HTTP basic auth with a token as the password. */
export const basicAuth = (token: string) => ({ authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` });

/** A whole pkt-line body's packets, and their text (`flush`, `delim` for the special ones). */
export function packetsOf(bytes: Buffer): Packet[] {
  const reader = new PktLineReader();
  const packets = [...reader.push(bytes)];
  reader.end();
  return packets;
}
export const packetTexts = (packets: Packet[]) => packets.map((p) => (p.type === 'data' ? p.data.toString('latin1') : p.type));
