import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../database.js';
import { migrateToLatest } from '../migrate.js';
import { listen, openRuntime, startWorker } from '../runtime.js';
import { mintToken } from '../bootstrap.js';
import { PROJECTORS } from '../projections/registry.js';
import { rebuildProjections } from '../projections/rebuild.js';
import { readProjectionLag } from '../projections/runner.js';

const USAGE = `forgelog — a GitLab API v4 compatible service on an event log

  forgelog serve                      HTTP API on PORT, inline projections, async workers in-process
  forgelog worker                     async projections and reactors only (any number may run)
  forgelog migrate                    apply database migrations
  forgelog rebuild NAME… | --all      rebuild read tables from the log into fresh tables, then swap
  forgelog projections                each projection's checkpoint and lag
  forgelog token --user NAME [--scopes api,sudo] [--name NAME]
                                      mint a personal access token (printed once)

Configuration comes from the environment (see README.md).`;

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve': {
      const runtime = await openRuntime(config);
      const { port } = await listen(runtime);
      runtime.logger.info({ port, external_url: config.externalUrl, database: runtime.handle.kind }, 'forgelog listening');
      const stop = async () => {
        await runtime.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    case 'worker': {
      const runtime = await openRuntime(config, { workers: false });
      const worker = startWorker(runtime.handle, runtime.app.commands, runtime.notifier, runtime.logger);
      await runtime.notifier.listen();
      runtime.logger.info({ projections: PROJECTORS.map((p) => p.name), database: runtime.handle.kind }, 'forgelog worker following the log');
      const stop = async () => {
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
