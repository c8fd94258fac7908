import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../database.js';
import { migrateToLatest } from '../migrate.js';
import { listen, openRuntime } from '../runtime.js';
import { mintToken } from '../bootstrap.js';

const USAGE = `forgelog — a GitLab API v4 compatible service on an event log

  forgelog serve                      HTTP API on PORT, inline projections, async workers in-process
  forgelog migrate                    apply database migrations
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

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
