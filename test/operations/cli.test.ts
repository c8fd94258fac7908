import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintToken } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { REACTORS } from '../../src/commands/reactors.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { readProjectionLag } from '../../src/projections/status.js';
import { openRuntime } from '../../src/runtime.js';
import { freshTestStore, itOnPostgres, onPostgres, type TestStore } from '../support/database.js';
import { TEST_DATA_DIR, withDatabase } from '../support/global-setup.js';

/** Every projection by name, in the registry's order (all are inline). */
const PROJECTION_NAMES = PROJECTORS.map((p) => p.name);
const REACTOR_NAMES = REACTORS.map((r) => r.name);

// `forgelog` as an operator meets it: real child processes (bin/forgelog.js), each on a
// database of its own (a copy of the migrated template: PGlite directory or PostgreSQL clone).

const BIN = resolve('bin/forgelog.js');

// A child start costs ~1.5 s of CPU (the app's modules, PGlite); on a busy shared
// machine several of them in one test take minutes.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: none of this process's forgelog settings, then `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(DATABASE_URL|PORT|LOG_LEVEL|FORGELOG_)/.test(key)));
  return { ...base, FORGELOG_PASSWORD_HASH_COST: '10', LOG_LEVEL: 'warn', ...env };
}

function start(args: string[], env: Record<string, string>, options: { closedStdout?: boolean } = {}): { child: ChildProcess; done: Promise<Result> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  // `forgelog … | head` after head has gone: nobody reads the pipe any more.
  if (options.closedStdout) child.stdout!.destroy();
  let stdout = '';
  let stderr = '';
  if (!options.closedStdout) child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<Result>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

const run = (args: string[], env: Record<string, string>, options: { closedStdout?: boolean } = {}) => start(args, env, options).done;

/** Waits for a JSON log line (on stdout) whose msg starts with `message`. */
function logLine(child: ChildProcess, message: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const parsed = JSON.parse(line);
          if (typeof parsed.msg === 'string' && parsed.msg.startsWith(message)) {
            child.stdout!.off('data', onData);
            return resolve(parsed);
          }
        } catch {}
      }
    };
    child.stdout!.on('data', onData);
    child.once('close', () => reject(new Error(`exited before logging "${message}": ${buffer}`)));
  });
}

/** A start-up error as the issue asks: one line on stderr, non-zero exit, no stack trace. */
function expectStartupError(result: Result, pattern: RegExp) {
  expect(result.stderr, result.stderr).not.toMatch(/^\s+at /m);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^forgelog: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
}

async function countRows(store: TestStore): Promise<{ events: number; users: number; reactors: number }> {
  const handle = await store.open();
  try {
    const { rows } = await sql<{ events: string; users: string; reactors: string }>`
      select (select count(*) from events) as events, (select count(*) from users) as users,
             (select count(*) from projection_checkpoints where name like 'reactor:%') as reactors`.execute(handle.db);
    return { events: Number(rows[0]!.events), users: Number(rows[0]!.users), reactors: Number(rows[0]!.reactors) };
  } finally {
    await handle.close();
  }
}

/** Edits one event's actor_id as a tamperer owning the table would: the append-only trigger off for the edit. */
async function setActor(store: TestStore, position: string, actor: number): Promise<void> {
  const handle = await store.open();
  try {
    await handle.db.transaction().execute(async (trx) => {
      await sql`alter table events disable trigger events_immutable`.execute(trx);
      await sql`update events set actor_id = ${actor} where global_position = ${position}`.execute(trx);
      await sql`alter table events enable trigger events_immutable`.execute(trx);
    });
  } finally {
    await handle.close();
  }
}

function occupy(host: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, host, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

const freePort = async () => {
  const { server, port } = await occupy('0.0.0.0');
  await new Promise((resolve) => server.close(resolve));
  return port;
};

describe('start-up errors: one line, non-zero exit, nothing written', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshTestStore('cli');
  });
  afterAll(() => store.dispose());

  it('a port in use is reported before the database is migrated or root created', async () => {
    const { server, port } = await occupy('0.0.0.0');
    try {
      // Embedded: a data directory that does not exist yet must not be created either.
      const dataDir = join(TEST_DATA_DIR, `cli-unborn-${randomBytes(4).toString('hex')}`);
      const env = onPostgres ? store.env : { FORGELOG_DATA_DIR: dataDir };
      const result = await run(['serve'], { ...env, PORT: String(port), LOG_LEVEL: 'info' });
      expectStartupError(result, new RegExp(`^forgelog: cannot listen on 0\\.0\\.0\\.0:${port} \\(FORGELOG_HOST, PORT\\): the port is in use`));
      if (onPostgres) expect(await countRows(store)).toEqual({ events: 0, users: 0, reactors: 0 });
      else expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('an address this machine does not have (FORGELOG_HOST)', async () => {
    const result = await run(['serve'], { ...store.env, FORGELOG_HOST: '203.0.113.7', PORT: String(await freePort()) });
    expectStartupError(result, /cannot listen on 203\.0\.113\.7:\d+ \(FORGELOG_HOST, PORT\): this machine has no such address/);
    expect(await countRows(store)).toEqual({ events: 0, users: 0, reactors: 0 });
  });

  it('malformed DATABASE_URL', async () => {
    const [garbage, mysql] = await Promise.all([run(['serve'], { DATABASE_URL: 'not a url' }), run(['migrate'], { DATABASE_URL: 'mysql://root@127.0.0.1/forgelog' })]);
    expectStartupError(garbage, /^forgelog: DATABASE_URL must be a URL like postgres:\/\/user:password@host:5432\/database$/);
    expectStartupError(mysql, /^forgelog: DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/, got mysql:\/\/…$/);
  });

  it('unreachable DATABASE_URL, without its password', async () => {
    const [refused, unknown] = await Promise.all([
      run(['serve'], { DATABASE_URL: 'postgres://forgelog:s3cret@127.0.0.1:1/forgelog', PORT: String(await freePort()) }),
      run(['projections'], { DATABASE_URL: 'postgres://forgelog:s3cret@no-such-host.invalid/forgelog' }),
    ]);
    expectStartupError(refused, /^forgelog: cannot open PostgreSQL at 127\.0\.0\.1:1\/forgelog \(DATABASE_URL\): connect ECONNREFUSED 127\.0\.0\.1:1$/);
    expectStartupError(unknown, /^forgelog: cannot open PostgreSQL at no-such-host\.invalid:5432\/forgelog \(DATABASE_URL\): getaddrinfo \w+ no-such-host\.invalid$/);
    expect(refused.stderr + unknown.stderr).not.toContain('s3cret');
  });

  itOnPostgres('a database that does not exist', async () => {
    const url = withDatabase(process.env.DATABASE_URL!, 'forgelog_no_such_database');
    const result = await run(['serve'], { DATABASE_URL: url, PORT: String(await freePort()) });
    expectStartupError(result, /^forgelog: cannot open PostgreSQL at .*\/forgelog_no_such_database \(DATABASE_URL\): database "forgelog_no_such_database" does not exist$/);
  });

  it('a data directory that cannot be written', async () => {
    // As root, permissions do not stop a write; sysfs refuses new files to anyone.
    let dir = '/sys/kernel';
    if (process.getuid?.() !== 0) {
      dir = mkdtempSync(join(TEST_DATA_DIR, 'cli-readonly-'));
      chmodSync(dir, 0o555);
    }
    try {
      const result = await run(['serve'], { FORGELOG_DATA_DIR: dir, PORT: String(await freePort()) });
      expectStartupError(result, new RegExp(`^forgelog: the embedded database directory ${dir} is not writable \\((EACCES|EPERM|EROFS)\\); set FORGELOG_DATA_DIR`));
      const nested = await run(['migrate'], { FORGELOG_DATA_DIR: join(BIN, 'data') });
      expectStartupError(nested, /^forgelog: the embedded database directory .*bin\/forgelog\.js\/data cannot be used \(ENOTDIR\); set FORGELOG_DATA_DIR/);
    } finally {
      if (dir !== '/sys/kernel') rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bad LOG_LEVEL, FORGELOG_PASSWORD_HASH_COST, FORGELOG_MONITORING_ALLOWLIST, PORT', async () => {
    const env = { ...store.env, PORT: String(await freePort()) };
    const results = await Promise.all([
      run(['serve'], { ...env, LOG_LEVEL: 'loud' }),
      run(['serve'], { ...env, FORGELOG_PASSWORD_HASH_COST: '30' }),
      run(['serve'], { ...env, FORGELOG_PASSWORD_HASH_COST: 'high' }),
      run(['serve'], { ...env, FORGELOG_MONITORING_ALLOWLIST: '127.0.0.1/8,intranet' }),
      run(['serve'], { ...env, PORT: '70000' }),
    ]);
    expectStartupError(results[0]!, /^forgelog: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"$/);
    expectStartupError(results[1]!, /^forgelog: FORGELOG_PASSWORD_HASH_COST must be an integer from 10 to 20, got "30"$/);
    expectStartupError(results[2]!, /^forgelog: FORGELOG_PASSWORD_HASH_COST must be an integer from 10 to 20, got "high"$/);
    expectStartupError(results[3]!, /^forgelog: FORGELOG_MONITORING_ALLOWLIST must be comma-separated IP addresses or CIDR ranges \(127\.0\.0\.0\/8,::1\/128\), got "intranet"$/);
    expectStartupError(results[4]!, /^forgelog: PORT must be a port number \(0–65535\), got "70000"$/);
    expect(await countRows(store)).toEqual({ events: 0, users: 0, reactors: 0 });
  });
});

describe('FORGELOG_HOST', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshTestStore('cli');
  });
  afterAll(() => store.dispose());

  it('is the address serve binds', async () => {
    const server = start(['serve'], { ...store.env, FORGELOG_HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', FORGELOG_ROOT_TOKEN: 'cli-root-token' });
    try {
      const listening = await logLine(server.child, 'forgelog listening');
      expect(listening).toMatchObject({ host: '127.0.0.1', port: expect.any(Number) });
      const res = await fetch(`http://127.0.0.1:${listening.port}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': 'cli-root-token' } });
      expect(res.status).toBe(200);
      // Not on the machine's other addresses.
      const other = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
      if (other) await expect(fetch(`http://${other.address}:${listening.port}/-/health`)).rejects.toThrow();
    } finally {
      server.child.kill('SIGTERM');
      await server.done;
    }
  });
});

describe('reporting commands', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshTestStore('cli');
  });
  afterAll(() => store.dispose());

  it('never create root, print tokens or start workers', async () => {
    const commands = [['migrate'], ['projections'], ['events', 'export'], ['events', 'verify'], ['rebuild', '--all']];
    for (const args of commands) {
      const result = await run(args, { ...store.env, LOG_LEVEL: 'info' });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout + result.stderr, args.join(' ')).not.toMatch(/token|administrator|worker/i);
    }
    const tail = start(['events', 'tail'], { ...store.env, LOG_LEVEL: 'info' });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    tail.child.kill('SIGINT');
    const tailed = await tail.done;
    expect(tailed.stdout + tailed.stderr).not.toMatch(/token|administrator|worker/i);
    // No root, no events, and no reactor ever started (a worker would have written its checkpoint).
    expect(await countRows(store)).toEqual({ events: 0, users: 0, reactors: 0 });
  });
});

describe('on a database in use', () => {
  let store: TestStore;
  let head: number;
  beforeAll(async () => {
    store = await freshTestStore('cli');
    // As a deployment leaves it: serve created root and ran the workers; writes came after.
    const handle = await store.open();
    const config = { ...loadConfig({}), logLevel: 'silent', rootToken: 'cli-root-token' };
    const runtime = await openRuntime(config, { handle, migrate: false, logger: pino({ level: 'silent' }) });
    await runtime.worker!.catchUp();
    await runtime.worker!.stop();
    for (let i = 0; i < 5; i++) await mintToken(runtime.app.commands, 'root', ['api']);
    // The inline projections' checkpoint rows stay where their last rebuild ended.
    expect((await readProjectionLag(handle.db, ['users']))[0]!.eventsBehind).toBeGreaterThanOrEqual(5);
    head = Number((await sql<{ n: string }>`select count(*) as n from events`.execute(handle.db)).rows[0]!.n);
    await runtime.close();
  });
  afterAll(() => store.dispose());

  it('deliveries lists integrations\' deliveries (none here) and refuses an unknown status', async () => {
    const listed = await run(['deliveries', '--status', 'failed'], store.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('');
    const refused = await run(['deliveries', '--status', 'lost'], store.env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--status must be one of pending, delivered, failed, recorded');
  });

  it('projections shows inline projections as inline, never behind', async () => {
    const result = await run(['projections'], store.env);
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((r) => [r.name, r.kind, r.mode])).toEqual([
      ...PROJECTION_NAMES.map((name) => [name, 'projection', 'inline']),
      ...REACTOR_NAMES.map((name) => [`reactor:${name}`, 'reactor', 'async']),
    ]);
    for (const row of rows.filter((r) => r.mode === 'inline')) expect(row).toMatchObject({ checkpoint: null, eventsBehind: 0, secondsBehind: 0 });
    // The reactors were stopped before the last 5 writes.
    for (const row of rows.filter((r) => r.kind === 'reactor')) {
      expect(row.eventsBehind).toBe(5);
      expect(row.checkpoint).toEqual({ transactionId: expect.stringMatching(/^\d+$/), globalPosition: String(head - 5) });
    }
  });

  it('progress is drawn only on a terminal: no carriage returns in a pipe', async () => {
    const verified = await run(['events', 'verify'], store.env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout + verified.stderr).not.toContain('\r');
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    const rebuilt = await run(['rebuild', '--all'], store.env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toMatch(new RegExp(`^rebuilt ${PROJECTION_NAMES.join(', ')}: ${head} events in [\\d.]+ s \\(\\d+ events/s\\)\\n$`));
    expect(rebuilt.stderr).toBe('');
  });

  it.runIf(existsSync('/usr/bin/script'))('and is drawn on a terminal', async () => {
    const envs = Object.entries({ ...store.env, FORGELOG_PASSWORD_HASH_COST: '10', LOG_LEVEL: 'warn' }).map(([k, v]) => `${k}='${v}'`);
    const child = spawn('/usr/bin/script', ['-qec', `env ${envs.join(' ')} ${process.execPath} ${BIN} rebuild --all`, '/dev/null'], {
      env: childEnv({}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    expect(output).toMatch(/\r\[#+\.*\] \d+% \d+\/\d+ events/);
  });

  it('events verify recomputes the feed index columns and exits 3 on an edited one', async () => {
    const handle = await store.open();
    const target = await handle.db.selectFrom('events').select(['global_position', 'stream_id', 'actor_id']).where('actor_id', 'is not', null).orderBy('global_position', 'desc').limit(1).executeTakeFirstOrThrow();
    await handle.close();
    const actor = target.actor_id!;
    await setActor(store, target.global_position, actor + 1);
    try {
      const tampered = await run(['events', 'verify'], store.env);
      expect(tampered.code, tampered.stderr).toBe(3);
      const report = JSON.parse(tampered.stdout);
      expect(report).toMatchObject({ ok: false, problemCount: 1, eventsChecked: head, indexesChecked: head });
      expect(report.problems).toEqual([
        expect.objectContaining({ kind: 'index_mismatch', streamId: target.stream_id, position: target.global_position, column: 'actor_id', stored: actor + 1, recomputed: actor }),
      ]);
    } finally {
      await setActor(store, target.global_position, actor);
    }
    const restored = await run(['events', 'verify'], store.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ ok: true, indexesChecked: head });
  });

  it('events verify hashes the git objects again and exits 3 on one whose content is not its name', async () => {
    // Planted as someone with the database's rights could: a blob stored under another's SHA.
    const sha = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'; // git's empty blob
    const handle = await store.open();
    await handle.db.insertInto('repository_objects').values({ project_id: 1, sha, type: 'blob', size: 3, content: Buffer.from('abc') }).execute();
    await handle.close();
    try {
      const tampered = await run(['events', 'verify'], store.env);
      expect(tampered.code, tampered.stderr).toBe(3);
      const report = JSON.parse(tampered.stdout);
      expect(report).toMatchObject({ ok: false, problemCount: 1, objectsChecked: 1 });
      expect(report.problems).toEqual([
        { kind: 'object_mismatch', projectId: 1, sha, detail: `project 1's blob ${sha}: its content hashes to f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f — the object was edited or swapped with another` },
      ]);
    } finally {
      const cleanup = await store.open();
      await cleanup.db.deleteFrom('repository_objects').where('sha', '=', sha).execute();
      await cleanup.close();
    }
  });

  it('a closed pipe (| head) ends the command quietly', async () => {
    for (const args of [['projections'], ['events', 'export']]) {
      const result = await run(args, store.env, { closedStdout: true });
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.code, args.join(' ')).toBe(0);
    }
  });

  it('worker says what it follows, and does not create root', async () => {
    const fresh = await freshTestStore('cli');
    const worker = start(['worker'], { ...fresh.env, LOG_LEVEL: 'info' });
    try {
      const line = await logLine(worker.child, 'forgelog worker following the log');
      expect(line).toMatchObject({
        async_projections: [],
        reactors: REACTOR_NAMES,
        sealer: true,
        delivery_sender: true,
        inline_projections: PROJECTION_NAMES,
        database: onPostgres ? expect.stringMatching(/^PostgreSQL at 127\.0\.0\.1:5432\/\w+$/) : `the embedded database in ${fresh.env.FORGELOG_DATA_DIR}`,
      });
      expect(line.msg).toContain(`reactors ${REACTOR_NAMES.join(', ')}; the sealer; the delivery sender. Inline projections (${PROJECTION_NAMES.join(', ')}) are kept by the writers`);
    } finally {
      worker.child.kill('SIGTERM');
    }
    const result = await worker.done;
    expect(result.stdout + result.stderr).not.toMatch(/token|administrator/i);
    expect((await countRows(fresh)).users).toBe(0);
    await fresh.dispose();
  });
});

describe('the log as evidence (issue 25 §1): keygen, seal, head, public-key, verify --against, prove', () => {
  let store: TestStore;
  let keyFile: string;
  let headFile: string;
  let withKey: Record<string, string>;
  beforeAll(async () => {
    store = await freshTestStore('cli');
    const dir = mkdtempSync(join(TEST_DATA_DIR, 'log-key-'));
    keyFile = join(dir, 'log-signing-key.pem');
    headFile = join(dir, 'head.json');
    withKey = { ...store.env, FORGELOG_LOG_SIGNING_KEY_FILE: keyFile };
    // A few events: root and its tokens, written without the workers (nothing sealed yet).
    const handle = await store.open();
    const runtime = await openRuntime({ ...loadConfig({}), logLevel: 'silent', rootToken: 'cli-root-token' }, { handle, migrate: false, workers: false, logger: pino({ level: 'silent' }) });
    for (let i = 0; i < 3; i++) await mintToken(runtime.app.commands, 'root', ['api']);
    await runtime.close();
  });
  afterAll(() => store.dispose());

  it('keygen writes a new key file readable by its owner only, prints its public key, and never overwrites one', async () => {
    const made = await run(['events', 'keygen', '--out', keyFile], store.env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const again = await run(['events', 'keygen', '--out', keyFile], store.env);
    expectStartupError(again, /^forgelog: cannot write .*: it exists \(a signing key is never overwritten\)$/);
    const shown = await run(['events', 'public-key'], withKey);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(made.stdout);
  });

  it('seal signs a head over the sealed log; head prints it as GET /-/log/head does', async () => {
    const sealed = await run(['events', 'seal'], withKey);
    expect(sealed.code, sealed.stderr).toBe(0);
    const result = JSON.parse(sealed.stdout);
    expect(result).toMatchObject({ seals: 1, head: { tree_size: result.events } });
    const head = await run(['events', 'head'], withKey);
    expect(head.code, head.stderr).toBe(0);
    expect(JSON.parse(head.stdout)).toEqual(result.head);
    expect(Object.keys(result.head)).toEqual(['tree_size', 'timestamp', 'sha256_root_hash', 'tree_head_signature']);
    writeFileSync(headFile, head.stdout);
    const none = await run(['events', 'head', '--tree-size', '999'], withKey);
    expectStartupError(none, /^forgelog: no signed tree head of tree size 999 was published$/);
  });

  it('verify --against the kept head: clean, then exit 3 naming a rewritten event; prove proves one event', async () => {
    const publicKeyFile = join(keyFile, '..', 'public.pem');
    writeFileSync(publicKeyFile, (await run(['events', 'public-key'], withKey)).stdout);
    const kept = JSON.parse(readFileSync(headFile, 'utf8'));
    // The auditor's side: the kept head and the public key, no signing key.
    const auditor = ['--public-key', publicKeyFile];
    const clean = await run(['events', 'verify', '--against', headFile, ...auditor], store.env);
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, keptHeadSize: kept.tree_size, treeSize: kept.tree_size, headsChecked: 1 });
    const proved = await run(['events', 'prove', '2', '--head', headFile, ...auditor], store.env);
    expect(proved.code, proved.stderr).toBe(0);
    expect(JSON.parse(proved.stdout)).toMatchObject({ ok: true, position: '2', leaf_index: 1, tree_size: kept.tree_size, problems: [] });

    // Someone with the database's rights rewrites event 2's stored hash, and seals the log anew (without the key: no head).
    const handle = await store.open();
    try {
      await handle.db.transaction().execute(async (trx) => {
        for (const table of ['events', 'event_seals', 'log_tree_leaves', 'log_tree_nodes', 'log_tree_heads']) await sql.raw(`alter table ${table} disable trigger user`).execute(trx);
        await sql`update events set hash = md5(hash) || md5(hash) where global_position = 2`.execute(trx);
        await sql.raw('truncate event_seals, log_tree_leaves, log_tree_nodes, log_tree_heads').execute(trx);
        for (const table of ['events', 'event_seals', 'log_tree_leaves', 'log_tree_nodes', 'log_tree_heads']) await sql.raw(`alter table ${table} enable trigger user`).execute(trx);
      });
    } finally {
      await handle.close();
    }
    expect((await run(['events', 'seal'], store.env)).code).toBe(0);
    const tampered = await run(['events', 'verify', '--against', headFile, ...auditor], store.env);
    expect(tampered.code, tampered.stderr).toBe(3);
    const kinds = JSON.parse(tampered.stdout).problems.map((p: { kind: string }) => p.kind);
    expect(kinds).toEqual(expect.arrayContaining(['hash_mismatch', 'head_mismatch', 'consistency_failed']));
    const disproved = await run(['events', 'prove', '2', '--head', headFile, ...auditor], store.env);
    expect(disproved.code, disproved.stderr).toBe(3);
    expect(JSON.parse(disproved.stdout).problems.map((p: { kind: string }) => p.kind)).toEqual(['hash_mismatch', 'inclusion_failed']);
  });

  it('refuses a kept head it cannot check, and a signing key that is not one', async () => {
    expectStartupError(await run(['events', 'verify', '--against', headFile], store.env), /^forgelog: a kept head is checked against the log's public key: give --public-key KEY\.pem/);
    expectStartupError(await run(['events', 'verify', '--against', keyFile, '--public-key', keyFile], store.env), /^forgelog: --against .*: not a signed tree head \(not JSON\)$/);
    expectStartupError(await run(['events', 'head'], { ...store.env, FORGELOG_LOG_SIGNING_KEY: 'not a key' }), /^forgelog: FORGELOG_LOG_SIGNING_KEY must be an Ed25519 private key in PEM \(forgelog events keygen makes one\)$/);
    expectStartupError(await run(['events', 'prove', '2'], store.env), /^forgelog: forgelog events prove POSITION --head HEAD\.json/);
  });
});
