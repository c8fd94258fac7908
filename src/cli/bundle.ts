import { createReadStream } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { feedIndexOf } from '../commands/kernel/aggregates.js';
import { REACTORS } from '../commands/reactors.js';
import type { Db } from '../database/database.js';
import { exportBundle, type BundleCounts } from '../eventstore/export.js';
import { importBundle, type ImportReport } from '../eventstore/import.js';
import { bundleContent } from '../projections/bundle-content.js';

/**
 * `forgelog events export --bundle` and `forgelog events import FILE`, wired to this
 * forgelog's aggregates (feed index), reactors and content stores. The CLI and the tests
 * (test/operations/import-round-trip.test.ts) go through these two functions.
 */
export function exportBundleTo(db: Db, out: Writable): Promise<BundleCounts> {
  return exportBundle(db, out, bundleContent);
}

export interface ImportFileOptions {
  publicKey?: KeyObject;
  onProgress?: (progress: { lines: number; events: number }) => void;
}

export function importBundleFile(db: Db, path: string, options: ImportFileOptions = {}): Promise<ImportReport> {
  return importBundle(db, () => linesOf(path), {
    feedIndex: feedIndexOf,
    content: bundleContent,
    reactors: REACTORS.map((r) => r.name),
    ...options,
  });
}

/** The file's lines, streamed (never the whole file in memory). */
async function* linesOf(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* lines;
  } finally {
    lines.close();
    input.destroy();
  }
}
