import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../database.js';
import { migrateToLatest } from '../migrate.js';
import { listen, openRuntime, startSealer, startWorker } from '../runtime.js';
import { mintToken } from '../bootstrap.js';
import { PROJECTORS } from '../projections/registry.js';
import { rebuildProjections } from '../projections/rebuild.js';
import { readProjectionLag } from '../projections/runner.js';
import { exportEvents } from '../eventstore/export.js';
import { rebaseTransactionIds } from '../eventstore/rebase.js';
import { sealPending } from '../eventstore/seal.js';
import { verifyLog } from '../eventstore/verify.js';
import { Notifier } from '../eventstore/notifier.js';
import { shutDownOnSignals } from '../shutdown.js';

const USAGE = `forgelog — a GitLab API v4 compatible service on an event log

  forgelog serve                      HTTP API on PORT, inline projections, async workers in-process
  forgelog worker                     async projections and reactors only (any number may run)
  forgelog migrate                    apply database migrations
  forgelog rebuild NAME… | --all      rebuild read tables from the log into fresh tables, then swap
  forgelog projections                each projection's checkpoint and lag
  forgelog events export [--stream ID] [--after TX:POS]
                                      the log as NDJSON on stdout, in gap-free order
  forgelog events tail [--stream ID]  the same, then follow new events until interrupted
  forgelog events verify              check every stream's hash chain and every seal
  forgelog events seal                seal what is readable now (Merkle roots over ranges)
  forgelog events rebase [--dry-run]  after a logical dump/restore: re-base stored transaction ids
  forgelog token --user NAME [--scopes api,sudo] [--name NAME]
                                      mint a personal access token (printed once)

Configuration comes from the environment (see README.md).`;

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const runtime = await openRuntime(config);
      const { server, port } = await listen(runtime);
      runtime.logger.info({ port, external_url: config.externalUrl, database: runtime.handle.kind }, 'forgelog listening');
      shutDownOnSignals({ server: server as Server, graceMs: config.shutdownGraceMs, logger: runtime.logger, close: () => runtime.close() });
      return;
    }
    case 'worker': {
      const runtime = await openRuntime(config, { workers: false });
      const worker = startWorker(runtime.handle, runtime.app.commands, runtime.notifier, runtime.logger);
      const sealing = new AbortController();
      const sealer = startSealer(runtime.handle, runtime.notifier, runtime.logger, sealing.signal);
      await runtime.notifier.listen();
      runtime.logger.info({ projections: PROJECTORS.map((p) => p.name), database: runtime.handle.kind }, 'forgelog worker following the log');
      const stop = async () => {
        sealing.abort();
        await sealer;
        await worker.stop();
        await runtime.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    case 'rebuild': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { all: { type: 'boolean', default: false } } });
      const chosen = values.all ? PROJECTORS : PROJECTORS.filter((p) => positionals.includes(p.name));
      const unknown = positionals.filter((name) => !PROJECTORS.some((p) => p.name === name));
      if (unknown.length > 0 || chosen.length === 0) {
        throw new Error(`name projections to rebuild (${PROJECTORS.map((p) => p.name).join(', ')}) or --all${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      }
      const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { workers: false });
      try {
        const result = await rebuildProjections(runtime.handle, chosen, { onProgress: progressBar });
        process.stderr.write('\n');
        const rate = result.milliseconds > 0 ? Math.round((result.events / result.milliseconds) * 1000) : result.events;
        console.log(`rebuilt ${chosen.map((p) => p.name).join(', ')}: ${result.events} events in ${(result.milliseconds / 1000).toFixed(2)} s (${rate} events/s)`);
      } finally {
        await runtime.close();
      }
      return;
    }
    case 'projections': {
      const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { workers: false });
      try {
        for (const row of await readProjectionLag(runtime.handle.db)) console.log(JSON.stringify(row));
      } finally {
        await runtime.close();
      }
      return;
    }
    case 'events':
      await events(config, rest);
      return;
    case 'migrate': {
      const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      const applied = await migrateToLatest(handle.db);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      await handle.close();
      return;
    }
    case 'token': {
      const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, scopes: { type: 'string', default: 'api' }, name: { type: 'string', default: 'cli' } } });
      if (!values.user) throw new Error('--user is required');
      const runtime = await openRuntime({ ...config, logLevel: 'warn' });
      try {
        const { token } = await mintToken(runtime.app.commands, values.user, values.scopes!.split(',').map((s) => s.trim()), values.name);
        console.log(token);
      } finally {
        await runtime.close();
      }
      return;
    }
    default:
      console.log(USAGE);
      if (command && command !== 'help' && command !== '--help') process.exitCode = 2;
  }
}

async function events(config: ReturnType<typeof loadConfig>, args: string[]) {
  const [verb, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { stream: { type: 'string' }, after: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
  });
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(handle.db);
    switch (verb) {
      case 'export':
      case 'tail': {
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
        const report = await verifyLog(handle.db, {
          onProgress: (p) => process.stderr.write(`\r${p.phase}: ${p.streamsChecked} streams, ${p.eventsChecked} events, ${p.sealsChecked} seals`),
        });
        process.stderr.write('\n');
        console.log(JSON.stringify(report, null, 2));
        if (!report.ok) process.exitCode = 3;
        return;
      }
      case 'seal': {
        const result = await sealPending(handle.db);
        console.log(JSON.stringify(result));
        return;
      }
      case 'rebase': {
        const result = await rebaseTransactionIds(handle.db, { dryRun: values['dry-run'] });
        console.log(JSON.stringify(result, null, 2));
        return;
      }
      default:
        throw new Error('forgelog events export | tail | verify | seal | rebase');
    }
  } finally {
    await handle.close();
  }
}

function parseCheckpoint(value: string) {
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) throw new Error('--after takes TRANSACTION_ID:GLOBAL_POSITION (as printed by a previous export)');
  return { transactionId: match[1]!, globalPosition: match[2]! };
}

function progressBar(done: number, total: number) {
  const width = 30;
  const ratio = total > 0 ? Math.min(done / total, 1) : 1;
  const filled = Math.round(ratio * width);
  process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(ratio * 100)}% ${done}/${total} events`);
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
