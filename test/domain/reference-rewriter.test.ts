import { describe, expect, it } from 'vitest';
import { referenceBase, rewriteReferences, writtenReferences } from '../../src/domain/notes/reference-rewriter.js';

// Gitlab::Gfm::ReferenceRewriter's text part: which references a text has, and how each is written for another project.

const all = () => 'g/old';

describe('writtenReferences', () => {
  it('reads #, !, % and ~ references with an optional project path, not in code, links or URLs', () => {
    const text = 'See #1, other!2 and g/x%3 ~4.\n`#5` [#6](http://h/#7) http://h/g/p#8 a#9b x#10\n\n```\n#11\n```\n    #12\n';
    expect(writtenReferences(text).map((r) => [r.kind, r.path, r.number])).toEqual([
      ['#', null, 1],
      ['!', 'other', 2],
      ['%', 'g/x', 3],
      ['~', null, 4],
      ['#', 'x', 10],
    ]);
  });

  it('is linear on a long path without a reference', () => {
    const text = `${'a-'.repeat(200_000)}#`;
    const started = Date.now();
    expect(writtenReferences(text)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('rewriteReferences', () => {
  it('writes each resolved reference as the target reads it and keeps the others', () => {
    const resolve = (r: { path: string | null; number: number }) => (r.number === 99 ? null : r.path === 'sib' ? 'g/sib' : all());
    expect(rewriteReferences('#1, sib#2, `#3`, #99', 'h/new', resolve)).toBe('g/old#1, g/sib#2, `#3`, #99');
    expect(rewriteReferences('#1 and sib!2', 'g/new', resolve)).toBe('old#1 and sib!2');
    expect(rewriteReferences('g/new#1', 'g/new', () => 'g/new')).toBe('#1');
  });

  it('Project#to_reference_base', () => {
    expect([referenceBase('g/a', 'g/a'), referenceBase('g/a', 'g/b'), referenceBase('g/a', 'h/b'), referenceBase('G/A', 'g/a')]).toEqual(['', 'a', 'g/a', '']);
  });
});
