import { describe, expect, it } from 'vitest';
import type { Checkpoint, LoggedEvent } from '../../src/eventstore/types.js';
import type { Projector } from '../../src/projections/projector.js';
import { PageReader, sequencesOf } from '../../src/projections/replay-pages.js';
import { handWritten } from './fixtures.js';

const projector = (name: string, tables: string[], reads?: string[]): Projector =>
  handWritten({ name, version: 1, mode: 'inline', handles: [], tables, ...(reads ? { reads } : {}), apply: async () => {} });

describe('sequencesOf', () => {
  it('puts a projector with the owners of the tables it reads, in their order, and leaves the others alone', () => {
    const users = projector('users', ['users']);
    const namespaces = projector('namespaces', ['namespaces']);
    const members = projector('members', ['members']);
    const projects = projector('projects', ['projects'], ['namespaces']);
    const audit = projector('audit', ['audit'], ['members', 'users']);
    expect(sequencesOf([users, namespaces, members, projects]).map((s) => s.map((p) => p.name))).toEqual([['users'], ['namespaces', 'projects'], ['members']]);
    expect(sequencesOf([users, namespaces, members, projects, audit]).map((s) => s.map((p) => p.name))).toEqual([
      ['users', 'members', 'audit'],
      ['namespaces', 'projects'],
    ]);
  });
});

describe('PageReader', () => {
  const LOG = Array.from({ length: 23 }, (_, i) => ({ transactionId: '1', globalPosition: String(i + 1) }) as LoggedEvent);
  const reader = (batchSize: number, sequences: number) => {
    const reads: string[] = [];
    const read = async (from: Checkpoint) => {
      reads.push(from.globalPosition);
      const start = Number(from.globalPosition);
      return LOG.slice(start, start + batchSize);
    };
    return { pages: new PageReader(read, batchSize, sequences), reads };
  };

  it('reads each page once, hands every sequence every page in order and holds few pages at once', async () => {
    const { pages, reads } = reader(5, 2);
    const seen: string[][] = [[], []];
    let held = 0;
    await Promise.all(
      [0, 1].map(async (s) => {
        for (let i = 0; ; i++) {
          const page = await pages.page(i);
          if (page.length === 0) break;
          held = Math.max(held, (pages as unknown as { pages: Map<number, unknown> }).pages.size);
          seen[s]!.push(...page.map((e) => e.globalPosition));
          // The second sequence is slower: the first must wait for it rather than read on.
          await new Promise((resolve) => setTimeout(resolve, s === 1 ? 5 : 0));
          pages.applied(i, s);
          if (page.length < 5) break;
        }
      }),
    );
    expect(seen[0]).toEqual(LOG.map((e) => e.globalPosition));
    expect(seen[1]).toEqual(LOG.map((e) => e.globalPosition));
    expect(reads).toEqual(['0', '5', '10', '15', '20']);
    expect(held).toBeLessThanOrEqual(4);
    expect(pages.end).toEqual({ transactionId: '1', globalPosition: '23' });
  });

  it('releases a sequence waiting to get ahead when another stops', async () => {
    const { pages } = reader(1, 2);
    for (let i = 0; i <= 2; i++) {
      await pages.page(i);
      pages.applied(i, 0);
    }
    const waiting = pages.page(3); // three pages ahead of the second sequence
    pages.stop();
    await expect(waiting).resolves.toBeDefined();
    expect(pages.stopped).toBe(true);
  });
});
