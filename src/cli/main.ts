import type { Server } from 'node:http';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { StartupError, checkGeoConfig, describeDatabaseUrl, loadConfig, type Config } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../database/database.js';
import { migrateToLatest } from '../database/migrate.js';
import { listen, openRuntime } from '../runtime.js';
import { mintToken } from '../bootstrap.js';
import { feedIndexOf, installEventTypes } from '../commands/kernel/aggregates.js';
import { REACTORS } from '../commands/reactors.js';
import { recentDeliveries } from '../commands/integration-deliveries.js';
import { PROJECTORS, asyncProjectors, inlineProjectors } from '../projections/registry.js';
import { rebuildProjections } from '../projections/rebuild.js';
import { readFollowerStatus } from '../projections/status.js';
import { exportEvents } from '../eventstore/export.js';
import { ImportRefused, ImportTargetNotEmpty } from '../eventstore/import.js';
import { exportBundleTo, importBundleFile } from './bundle.js';
import { rebaseTransactionIds } from '../eventstore/rebase.js';
import { sealPending } from '../eventstore/seal.js';
import { parsePublicKey, parseTreeHeadJson, publicKeyPem, publishTreeHead, publishedHead, treeHeadJson, type TreeHead } from '../eventstore/tree-heads.js';
import { proveInclusion } from '../eventstore/verify-tree.js';
import { verifyLog } from '../eventstore/verify.js';
import { repositoryObjectsCheck } from '../projections/repository/verify.js';
import { Notifier } from '../eventstore/notifier.js';
import { shutDownOnSignals } from '../shutdown.js';
import { boundHeapGrowth } from '../heap.js';

const USAGE = `forgelog — a GitLab API v4 compatible service on an event log

  forgelog serve                      HTTP API on PORT, inline projections, async workers in-process
  forgelog serve --geo-secondary --primary URL
                                      a read-only Geo secondary following URL's log (docs/geo.md)
  forgelog worker                     async projections and reactors only (any number may run)
  forgelog migrate                    apply database migrations
  forgelog rebuild NAME… | --all      rebuild read tables from the log into fresh tables, then swap
  forgelog projections                each projection's and reactor's checkpoint and lag
  forgelog events export [--stream ID] [--after TX:POS]
                                      the log as NDJSON on stdout, in gap-free order
  forgelog events export --bundle     the log with seals, signed heads, uploads, git objects,
                                      sequences and claims: what events import takes
  forgelog events import FILE [--public-key KEY.pem]
                                      a bundle into an empty database, verified line by line;
                                      then run forgelog rebuild --all
  forgelog events tail [--stream ID]  the same, then follow new events until interrupted
  forgelog events verify [--against HEAD.json] [--public-key KEY.pem]
                                      check every stream's hash chain, every event's feed
                                      index columns, every seal, every git object, the log
                                      tree and its signed heads; --against: a head kept
                                      outside the database, which the log must still extend
  forgelog events prove POSITION --head HEAD.json [--public-key KEY.pem]
                                      prove the event at POSITION is in a kept head's tree
  forgelog events seal                seal what is readable now (Merkle roots over ranges),
                                      and sign a tree head when a signing key is set
  forgelog events head [--tree-size N]
                                      the newest signed tree head (JSON, as GET /-/log/head)
  forgelog events public-key          the log signing key's public key (PEM)
  forgelog events keygen [--out FILE] a new Ed25519 signing key (PEM) for FORGELOG_LOG_SIGNING_KEY(_FILE)
  forgelog events rebase [--dry-run]  after a logical dump/restore: re-base stored transaction ids
  forgelog deliveries [--status S] [--limit N]
                                      integrations' and webhooks' recent outbound deliveries, newest first
  forgelog token --user NAME [--scopes api,sudo] [--name NAME]
                                      mint a personal access token (printed once)

Configuration comes from the environment (see README.md).`;

const DELIVERY_STATUSES: readonly string[] = ['pending', 'delivered', 'failed', 'recorded'];

/** Reporting commands (projections, events, migrate, rebuild) open the database only: no root bootstrap, no tokens, no workers. */
async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { 'geo-secondary': { type: 'boolean', default: false }, primary: { type: 'string' } } });
      if (values['geo-secondary']) config.geo.secondary = true;
      if (values.primary !== undefined) config.geo.primaryUrl = values.primary.replace(/\/+$/, '');
      checkGeoConfig(config.geo);
      boundHeapGrowth(config.heapGrowingPercent);
      // Every start-up check before the first write (migrations, root): config, port, database.
      await ensurePortFree(config);
      const runtime = await openRuntime(config, { handle: await openStore(config) });
      const listening = await listen(runtime).catch((error: unknown) => {
        throw listenError(error, config);
      });
      runtime.logger.info({ host: config.host, port: listening.port, external_url: config.externalUrl, database: describeStore(config) }, 'forgelog listening');
      shutDownOnSignals({ server: listening.server as Server, graceMs: config.shutdownGraceMs, logger: runtime.logger, close: () => runtime.close() });
      return;
    }
    case 'worker': {
      // The runtime's own workers and sealer (as in serve), without HTTP and without root.
      boundHeapGrowth(config.heapGrowingPercent);
      const runtime = await openRuntime(config, { handle: await openStore(config), bootstrap: false });
      const following = {
        async_projections: asyncProjectors().map((p) => p.name),
        reactors: REACTORS.map((r) => r.name),
        sealer: true,
        delivery_sender: true,
        inline_projections: inlineProjectors().map((p) => p.name),
        database: describeStore(config),
      };
      runtime.logger.info(
        following,
        `forgelog worker following the log in ${following.database}: async projections ${list(following.async_projections)}; ` +
          `reactors ${list(following.reactors)}; the sealer; the delivery sender. Inline projections (${list(following.inline_projections)}) are kept by the writers, not by workers`,
      );
      shutDownOnSignals({ graceMs: config.shutdownGraceMs, logger: runtime.logger, close: () => runtime.close() });
      return;
    }
    case 'rebuild': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { all: { type: 'boolean', default: false } } });
      const chosen = values.all ? PROJECTORS : PROJECTORS.filter((p) => positionals.includes(p.name));
      const unknown = positionals.filter((name) => !PROJECTORS.some((p) => p.name === name));
      if (unknown.length > 0 || chosen.length === 0) {
        throw new StartupError(`name projections to rebuild (${PROJECTORS.map((p) => p.name).join(', ')}) or --all${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      }
      const handle = await openStore(config);
      try {
        await migrateToLatest(handle.db);
        const progress = progressBar();
        const result = await rebuildProjections(handle, chosen, { onProgress: progress.draw });
        progress.end();
        const rate = result.milliseconds > 0 ? Math.round((result.events / result.milliseconds) * 1000) : result.events;
        console.log(`rebuilt ${chosen.map((p) => p.name).join(', ')}: ${result.events} events in ${(result.milliseconds / 1000).toFixed(2)} s (${rate} events/s)`);
      } finally {
        await handle.close();
      }
      return;
    }
    case 'projections': {
      const handle = await openStore(config);
      try {
        await migrateToLatest(handle.db);
        // Inline projections are written with every append: never behind, whatever their checkpoint row says.
        for (const row of await readFollowerStatus(handle.db, { projectors: PROJECTORS, reactors: REACTORS })) console.log(JSON.stringify(row));
      } finally {
        await handle.close();
      }
      return;
    }
    case 'events':
      await events(config, rest);
      return;
    case 'migrate': {
      const handle = await openStore(config);
      try {
        const applied = await migrateToLatest(handle.db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      } finally {
        await handle.close();
      }
      return;
    }
    case 'deliveries': {
      const { values } = parseArgs({ args: rest, options: { status: { type: 'string' }, limit: { type: 'string', default: '20' } } });
      const limit = Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new StartupError(`--limit must be a positive whole number, got ${JSON.stringify(values.limit)}`);
      if (values.status !== undefined && !DELIVERY_STATUSES.includes(values.status)) throw new StartupError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const handle = await openStore(config);
      try {
        await migrateToLatest(handle.db);
        for (const row of await recentDeliveries(handle.db, { limit, ...(values.status ? { status: values.status } : {}) })) console.log(JSON.stringify(row));
      } finally {
        await handle.close();
      }
      return;
    }
    case 'token': {
      const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, scopes: { type: 'string', default: 'api' }, name: { type: 'string', default: 'cli' } } });
      if (!values.user) throw new StartupError('--user is required');
      const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { handle: await openStore(config) });
      try {
        const { token } = await mintToken(runtime.app.commands, values.user, values.scopes!.split(',').map((s) => s.trim()), values.name);
        console.log(token);
      } finally {
        await runtime.close();
      }
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = 2;
  }
}

async function events(config: ReturnType<typeof loadConfig>, args: string[]) {
  const [verb, ...rest] = args;
  if (verb === 'import') {
    await importEvents(config, rest);
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: verb === 'prove',
    options: {
      stream: { type: 'string' },
      after: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      against: { type: 'string' },
      head: { type: 'string' },
      'public-key': { type: 'string' },
      'tree-size': { type: 'string' },
      out: { type: 'string' },
      bundle: { type: 'boolean', default: false },
    },
  });
  // Needs no database: the key must never be in it.
  if (verb === 'keygen') {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    if (!values.out) {
      process.stdout.write(pem);
      return;
    }
    try {
      writeFileSync(values.out, pem, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      throw new StartupError(`cannot write ${values.out}: ${(error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists (a signing key is never overwritten)' : describeError(error)}`);
    }
    console.log(publicKeyPem(createPublicKey(pem)).trimEnd());
    return;
  }
  if (verb === 'public-key') {
    if (!config.logHeads.signingKey) throw new StartupError('no log signing key: set FORGELOG_LOG_SIGNING_KEY or FORGELOG_LOG_SIGNING_KEY_FILE');
    process.stdout.write(publicKeyPem(config.logHeads.signingKey));
    return;
  }
  const keptHead = readHeadFile(verb === 'prove' ? values.head : values.against, verb === 'prove' ? '--head' : '--against');
  if (verb === 'prove' && (!keptHead || positionals.length !== 1 || !/^\d+$/.test(positionals[0]!))) {
    throw new StartupError('forgelog events prove POSITION --head HEAD.json [--public-key KEY.pem]');
  }
  const publicKey = verificationKey(config, values['public-key'], keptHead !== undefined);
  const handle = await openStore(config);
  try {
    await migrateToLatest(handle.db);
    switch (verb) {
      case 'export':
      case 'tail': {
        if (values.bundle) {
          if (verb === 'tail' || values.after !== undefined || values.stream !== undefined) throw new StartupError('--bundle exports the whole database: it takes neither --after nor --stream, and does not tail');
          const counts = await exportBundleTo(handle.db, process.stdout);
          process.stderr.write(`bundle: ${Object.entries(counts).map(([kind, n]) => `${n} ${kind.replace('_', ' ')}`).join(', ')}\n`);
          return;
        }
        const follow = verb === 'tail';
        const after = values.after ? parseCheckpoint(values.after) : undefined;
        const notifier = new Notifier(handle.pool);
        const stop = new AbortController();
        process.once('SIGINT', () => stop.abort());
        process.once('SIGTERM', () => stop.abort());
        if (follow) await notifier.listen();
        const result = await exportEvents(handle.db, process.stdout, {
          follow,
          signal: stop.signal,
          onAppended: (wake) => notifier.onAppended(wake),
          ...(after ? { after } : {}),
          ...(values.stream ? { streamId: values.stream } : {}),
        });
        await notifier.close();
        process.stderr.write(`${result.events} events; resume with --after ${result.checkpoint.transactionId}:${result.checkpoint.globalPosition}\n`);
        return;
      }
      case 'verify': {
        const progress = onTerminal();
        const report = await verifyLog(handle.db, {
          feedIndex: feedIndexOf,
          objects: repositoryObjectsCheck(handle.db),
          ...(keptHead && { keptHead }),
          ...(publicKey && { publicKey }),
          ...(progress && {
            onProgress: (p) => progress.draw(`${p.phase}: ${p.streamsChecked} streams, ${p.eventsChecked} events, ${p.sealsChecked} seals, ${p.objectsChecked} git objects`),
          }),
        });
        progress?.end();
        console.log(JSON.stringify(report, null, 2));
        if (!report.ok) process.exitCode = 3;
        return;
      }
      case 'seal': {
        const result = await sealPending(handle.db);
        const key = config.logHeads.signingKey;
        const head = key ? (await publishTreeHead(handle.db, key)).published : undefined;
        console.log(JSON.stringify(head ? { ...result, head: treeHeadJson(head) } : result));
        return;
      }
      case 'head': {
        const size = values['tree-size'];
        if (size !== undefined && !/^\d+$/.test(size)) throw new StartupError(`--tree-size must be a whole number, got ${JSON.stringify(size)}`);
        const head = await publishedHead(handle.db, size === undefined ? undefined : Number(size));
        if (!head) throw new StartupError(size === undefined ? 'no signed tree head published yet (a signing key set, and events sealed?)' : `no signed tree head of tree size ${size} was published`);
        console.log(JSON.stringify(treeHeadJson(head)));
        return;
      }
      case 'prove': {
        const report = await proveInclusion(handle.db, positionals[0]!, keptHead!, publicKey!);
        console.log(JSON.stringify(report, null, 2));
        if (!report.ok) process.exitCode = 3;
        return;
      }
      case 'rebase': {
        const result = await rebaseTransactionIds(handle.db, { dryRun: values['dry-run'] });
        console.log(JSON.stringify(result, null, 2));
        return;
      }
      default:
        throw new StartupError('forgelog events export | tail | import | verify | prove | seal | head | public-key | keygen | rebase');
    }
  } finally {
    await handle.close();
  }
}

/**
 * `forgelog events import FILE [--public-key KEY.pem]`: exit 0 and a JSON report when
 * imported; 3 and the refusal (its line, position and kind) when the file does not verify;
 * 2 for a usage error; 1 when the database is not empty or cannot be opened.
 */
async function importEvents(config: Config, args: string[]) {
  const usage = 'forgelog events import FILE [--public-key KEY.pem]';
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { 'public-key': { type: 'string' } } });
  } catch (error) {
    console.error(`forgelog: ${describeError(error)}\nusage: ${usage}`);
    process.exitCode = 2;
    return;
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0) {
    console.error(`usage: ${usage}`);
    process.exitCode = 2;
    return;
  }
  try {
    accessSync(file, constants.R_OK);
  } catch (error) {
    console.error(`forgelog: cannot read ${file}: ${describeError(error)}`);
    process.exitCode = 2;
    return;
  }
  const publicKey = verificationKey(config, parsed.values['public-key'], false);
  const handle = await openStore(config);
  try {
    await migrateToLatest(handle.db);
    const progress = onTerminal();
    const report = await importBundleFile(handle.db, file, {
      ...(publicKey && { publicKey }),
      ...(progress && { onProgress: (p) => progress.draw(`${p.lines} lines, ${p.events} events`) }),
    }).catch((error: unknown) => {
      progress?.end();
      if (error instanceof ImportTargetNotEmpty) throw new StartupError(error.message);
      if (!(error instanceof ImportRefused)) throw error;
      console.log(JSON.stringify({ ok: false, ...error.refusal }, null, 2));
      console.error(`forgelog: nothing imported: ${error.message}`);
      process.exitCode = 3;
      return undefined;
    });
    if (!report) return;
    progress?.end();
    console.log(JSON.stringify({ ok: true, ...report }, null, 2));
    console.error('imported; now run `forgelog rebuild --all` before serving (the read tables are empty)');
  } finally {
    await handle.close();
  }
}

/** A head kept outside the database (the JSON of GET /-/log/head or `events head`). */
function readHeadFile(path: string | undefined, option: string): TreeHead | undefined {
  if (path === undefined) return undefined;
  try {
    return parseTreeHeadJson(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new StartupError(`${option} ${path}: not a signed tree head (${describeError(error)})`);
  }
}

/** The key heads are checked with: --public-key, else the configured signing key's public half; a kept head needs one. */
function verificationKey(config: Config, path: string | undefined, needed: boolean): KeyObject | undefined {
  if (path !== undefined) {
    try {
      return parsePublicKey(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new StartupError(`--public-key ${path}: not an Ed25519 public key in PEM (${describeError(error)})`);
    }
  }
  if (config.logHeads.signingKey) return createPublicKey(config.logHeads.signingKey);
  if (needed) throw new StartupError('a kept head is checked against the log\'s public key: give --public-key KEY.pem (GET /api/v4/-/log/public_key) or set FORGELOG_LOG_SIGNING_KEY(_FILE)');
  return undefined;
}

function parseCheckpoint(value: string) {
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) throw new StartupError('--after takes TRANSACTION_ID:GLOBAL_POSITION (as printed by a previous export)');
  return { transactionId: match[1]!, globalPosition: match[2]! };
}

const list = (names: readonly string[]) => (names.length ? names.join(', ') : 'none');

/** A status line redrawn in place on stderr — only when stderr is a terminal (a pipe or a log file gets no `\r`). */
function onTerminal(): { draw(line: string): void; end(): void } | undefined {
  if (!process.stderr.isTTY) return undefined;
  let drawn = false;
  return {
    draw(line) {
      drawn = true;
      process.stderr.write(`\r${line}\x1b[K`);
    },
    end() {
      if (drawn) process.stderr.write('\n');
    },
  };
}

function progressBar() {
  const line = onTerminal();
  const width = 30;
  return {
    draw(done: number, total: number) {
      const ratio = total > 0 ? Math.min(done / total, 1) : 1;
      const filled = Math.round(ratio * width);
      line?.draw(`[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(ratio * 100)}% ${done}/${total} events`);
    },
    end: () => line?.end(),
  };
}

// ───────────────────────────── Start-up checks ─────────────────────────────

const describeStore = (config: Config) =>
  config.databaseUrl ? `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}` : `the embedded database in ${config.dataDir}`;

/**
 * Binds config.host:config.port and lets go, so a busy port or an address this machine does
 * not have is reported before the database is opened, migrated or given its root user.
 */
async function ensurePortFree(config: Config): Promise<void> {
  if (config.port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(listenError(error, config)));
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function listenError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reasons: Record<string, string> = {
    EADDRINUSE: 'the port is in use (another forgelog, or another program, listens on it)',
    EADDRNOTAVAIL: 'this machine has no such address',
    EACCES: 'permission denied (ports below 1024 need privileges)',
    ENOTFOUND: 'unknown host name',
    EAI_AGAIN: 'the host name could not be resolved',
  };
  const reason = (code && reasons[code]) ?? describeError(error);
  return new StartupError(`cannot listen on ${config.host}:${config.port} (FORGELOG_HOST, PORT): ${reason}`);
}

/**
 * Opens the database and checks that it answers, so a malformed, unreachable or refusing
 * database — or an unwritable data directory — is one clear line before anything is written.
 */
async function openStore(config: Config): Promise<DatabaseHandle> {
  // Before anything reads the log: how each event type is upcast and checked.
  installEventTypes();
  const where = config.databaseUrl ? `${describeStore(config)} (DATABASE_URL)` : `${describeStore(config)} (FORGELOG_DATA_DIR)`;
  try {
    const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within 15 s')), 15_000);
    });
    try {
      await Promise.race([sql`select 1`.execute(handle.db), timeout]);
    } finally {
      clearTimeout(timer);
    }
    return handle;
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(`cannot open ${where}: ${describeError(error)}`);
  }
}

/** One line: an error's message (the first of an AggregateError's, as `connect` gives for localhost). */
function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors[0]) return describeError(error.errors[0]);
  if (error instanceof Error) return (error.message || (error as NodeJS.ErrnoException).code || error.name).replace(/\s*\n\s*/g, ' ');
  return String(error);
}

// ───────────────────────────── Output ─────────────────────────────

// `forgelog … | head`: the reader went away. Stop quietly, as a Unix filter does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.exit(1);
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // A StartupError says all there is to say; anything else is one line too (LOG_LEVEL=debug adds the stack).
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  console.error(`forgelog: ${describeError(error)}`);
  if (debug && !(error instanceof StartupError) && error instanceof Error && error.stack) console.error(error.stack);
  process.exit(1);
});
