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

  it('masks elements, code spans, links and autolinks as CommonMark closes them', () => {
    const text = '<A href="x">#1</a >, <code>#2</code> <pre class=x>#3</Pre> ``#4`` ```#5`#6 [t](u(#7)) <http:#8> <abbr>#9</abbr>';
    expect(writtenReferences(text).map((r) => r.number)).toEqual([5, 6, 9]);
  });

  // Each would read the rest of the text again from every opening (seconds to minutes at these
  // sizes): they must end well inside the test timeout, and still find the reference at the end.
  it.each([
    ['a long path', 'a-'.repeat(200_000)],
    ['unclosed elements', '<a>x'.repeat(100_000)],
    ['openings without their >', '<pre '.repeat(100_000)],
    ['closing tags without their >', `<a>${'</a '.repeat(100_000)}`],
    ['unclosed link destinations', '[x]('.repeat(100_000)],
    ['unclosed link labels', '['.repeat(400_000)],
    ['a run of backticks before plain text', `x${'`'.repeat(200_000)}${'a'.repeat(200_000)}`],
    ['backtick runs that never recur', Array.from({ length: 800 }, (_, i) => `${'`'.repeat(i + 1)}a`).join('')],
    ['unclosed autolinks', '<http:'.repeat(100_000)],
  ])('is linear on %s', (_name, hostile) => {
    expect(writtenReferences(`${hostile}\n\n#1`).map((r) => r.number)).toEqual([1]);
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
