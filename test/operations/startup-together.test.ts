import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { describe, expect, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { adminQuery, itOnPostgres } from '../support/database.js';
import { withDatabase } from '../support/global-setup.js';

// Two processes started together on one new PostgreSQL database (a deployment's replicas)
// take turns at the start-up (src/runtime.ts): one migrates, creates root and rebuilds, the
// other finds that done. Before, both created root (`conflict: User already exists`) or
// dropped each other's rebuild schema, and one of them did not start.

vi.setConfig({ testTimeout: 300_000 });

describe('processes starting together on a new database', () => {
  itOnPostgres('both start, and root is created once', async () => {
    const url = process.env.DATABASE_URL!;
    for (let round = 0; round < 2; round++) {
      const name = `startup_together_${randomBytes(5).toString('hex')}`;
      await adminQuery(url, `create database "${name}"`);
      const runtimes: Runtime[] = [];
      try {
        const start = async () => {
          const config = { ...loadConfig({}), databaseUrl: withDatabase(url, name), port: 0, logLevel: 'silent' as const, rootToken: 'root-token-for-startup-tests' };
          const runtime = await openRuntime(config, { logger: pino({ level: 'silent' }) });
          runtimes.push(runtime);
          return runtime;
        };
        const started = await Promise.allSettled([start(), start()]);
        expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(['started', 'started']);
        // Exactly one of them created root.
        expect(runtimes.filter((r) => r.bootstrapToken !== undefined)).toHaveLength(1);
        const db = runtimes[0]!.handle.db;
        const users = await sql<{ username: string }>`select username from users`.execute(db);
        expect(users.rows).toEqual([{ username: 'root' }]);
        const created = await sql<{ n: string }>`select count(*) as n from events where event_type = 'UserCreated'`.execute(db);
        expect(Number(created.rows[0]!.n)).toBe(1);
        // Every projection has its checkpoint, written once.
        const checkpoints = await sql<{ n: string }>`select count(*) as n from projection_checkpoints`.execute(db);
        expect(Number(checkpoints.rows[0]!.n)).toBeGreaterThan(0);
      } finally {
        for (const runtime of runtimes) await runtime.close();
        await adminQuery(url, `drop database if exists "${name}" with (force)`);
      }
    }
  });
});
