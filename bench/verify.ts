/**
 * `forgelog events verify` speed (issue 25; bench/README.md, "Import and verify"): over the
 * log the import phase left (BENCH_IMPORT_EVENTS events, sealed, with their tree and a signed
 * head), with what the CLI checks: every chain, feed index column, seal, the tree and its
 * heads with their signatures, the git objects. Target ≥ 100,000 events/s.
 */
import type { KeyObject } from 'node:crypto';
import { feedIndexOf } from '../src/commands/kernel/aggregates.js';
import { openDatabase, type Db } from '../src/database/database.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { verifyLog } from '../src/eventstore/verify.js';
import { repositoryObjectsCheck } from '../src/projections/repository/verify.js';
import { EVENTS_PER_SECOND_TARGET, measureImport, throughputRow, type ImportFigures } from './import.js';
import { cpuTicks, log, round, toCores, type CpuSplit } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import type { Row } from './harness/table.js';

export interface VerifyFigures {
  events: number;
  seals: number;
  treeSize: number;
  seconds: number;
  eventsPerSecond: number;
  cores: CpuSplit;
}

/** The `import` phase: a database of its own, the import into it, then verify over what it imported. */
export async function measureImportVerify(database: string, cleanups: Cleanups): Promise<{ import: ImportFigures; verify: VerifyFigures }> {
  const { url, drop } = await createDatabase(database, cleanups);
  const handle = await openDatabase({ databaseUrl: url, poolSize: 2 });
  try {
    await migrateToLatest(handle.db);
    const { publicKey, ...imported } = await measureImport(handle.db);
    return { import: imported, verify: await measureVerify(handle.db, publicKey) };
  } finally {
    await handle.close();
    await drop();
  }
}

export async function measureVerify(db: Db, publicKey: KeyObject): Promise<VerifyFigures> {
  log('verify: over the imported log…');
  const cpu = cpuTicks(undefined);
  const started = performance.now();
  const report = await verifyLog(db, { feedIndex: feedIndexOf, objects: repositoryObjectsCheck(db), publicKey });
  const seconds = (performance.now() - started) / 1000;
  const cores = toCores(cpu());
  if (!report.ok) throw new Error(`verify bench: the imported log does not verify: ${JSON.stringify(report.problems.slice(0, 3))}`);
  log(`verify: ${report.eventsChecked} events in ${round(seconds, 1)} s`);
  return { events: report.eventsChecked, seals: report.sealsChecked, treeSize: report.treeSize, seconds, eventsPerSecond: Math.round(report.eventsChecked / seconds), cores };
}

export const verifyMissed = (f: VerifyFigures): string[] =>
  f.eventsPerSecond >= EVENTS_PER_SECOND_TARGET ? [] : [`events verify: ${f.eventsPerSecond} events/s over ${f.events} events, target ≥ ${EVENTS_PER_SECOND_TARGET}`];

export const verifyRow = (f: VerifyFigures): Row => throughputRow(`events verify, ${f.events} events (${f.seals} seals, tree of ${f.treeSize})`, f);

export const verifyJson = (f: VerifyFigures) => ({ ...f, seconds: round(f.seconds, 2), targets: { eventsPerSecond: EVENTS_PER_SECOND_TARGET } });
