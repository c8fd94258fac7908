import { createReadStream } from 'node:fs';
import type { KeyObject } from 'node:crypto';
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

/**
 * The file's lines, streamed (never the whole file in memory): split as readline splits them
 * (\n, \r\n or a lone \r ends a line; no line after a last line break), a chunk at a time
 * (readline's events cost as much as parsing the line).
 */
export async function* linesOf(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let rest = '';
  try {
    for await (const chunk of input as AsyncIterable<string>) {
      let text = rest + chunk;
      rest = '';
      // A \r at the end of a chunk may be the first half of a \r\n.
      if (text.endsWith('\r')) {
        rest = '\r';
        text = text.slice(0, -1);
      }
      const lines = text.includes('\r') ? text.split(/\r\n|\r|\n/) : text.split('\n');
      rest = lines.pop()! + rest;
      yield* lines;
    }
    if (rest === '\r') yield '';
    else if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
  } finally {
    input.destroy();
  }
}
