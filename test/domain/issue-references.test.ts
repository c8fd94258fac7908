import { describe, expect, it } from 'vitest';
import { closingIssueReferences, issueReferences, type IssueReference } from '../../src/domain/issues/references.js';

// The regular expressions the scanners replace (GitLab's reference and closing patterns, as
// JavaScript reads them): quadratic on hostile text, exact on short text, so the oracle here.
const PATH = String.raw`[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*(?:/[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*)*`;
const SHORT = new RegExp(String.raw`(?<![\w/#&])(?:(${PATH}))?#(\d+)(?!\w)`, 'g');
const LINK = new RegExp(String.raw`https?://[^\s/]+/(${PATH})/(?:-/)?issues/(\d+)(?![\w/])`, 'g');
const ISSUE_REF = String.raw`(?:https?://[^\s/]+/${PATH}/(?:-/)?issues/\d+|(?:${PATH})?#\d+)`;
const CLOSING = new RegExp(
  String.raw`\b((?:[Cc]los(?:e[sd]?|ing)|\b[Ff]ix(?:e[sd]|ing)?|\b[Rr]esolv(?:e[sd]?|ing)|\b[Ii]mplement(?:s|ed|ing)?)(:?) +(?:(?:issues? +)?${ISSUE_REF}(?:(?: *,? +and +| *,? *)?)|([A-Z][A-Z0-9_]+-\d+))+)`,
  'g',
);

function oracleReferences(text: string): IssueReference[] {
  const found: { at: number; ref: IssueReference }[] = [];
  for (const m of text.matchAll(LINK)) found.push({ at: m.index, ref: { path: m[1]!, iid: Number(m[2]) } });
  for (const m of text.matchAll(SHORT)) found.push({ at: m.index, ref: { path: m[1] ?? null, iid: Number(m[2]) } });
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at)
    .map((f) => f.ref)
    .filter((ref) => Number.isSafeInteger(ref.iid) && !seen.has(`${ref.path}#${ref.iid}`) && seen.add(`${ref.path}#${ref.iid}`));
}

const oracleClosing = (text: string): IssueReference[] => oracleReferences([...text.matchAll(CLOSING)].map((m) => m[0]).join('\n'));

const KEYWORDS = ['Closes', 'closed', 'Close', 'closing', 'Fix', 'fixes', 'Fixing', 'Fixed', 'resolves', 'Resolve', 'Implements', 'implemented', 'prefix', 'Clos', 'xCloses'];
const PIECES = [
  '#1', '#22', 'a#3', 'g/p#4', 'g/p/#5', 'a-b.c_d/e#6', '#', '1', ' ', ' ', ',', ', ', ' and ', 'and ', ',and ', ', and ', 'issues ', 'issue ', 'issues',
  'http://h/g/p/issues/7', 'https://h.x/g/-/issues/8', 'http://h/g/p/issues/9x', 'http://h/g/p/issues/10/', 'https://h/a/issues/1/issues/2', '/', '-', 'x',
  'JIRA-12', 'AB_1-2', 'A-1', ':', '\n', '.', '&#5', '#7a', '#8_', 'é',
];

describe('issue references on any text', () => {
  it('reads cross-project paths, links with and without /-/, and closing lists with their separators', () => {
    expect(issueReferences('a-b.c/d_e#7 (g/p#8a) http://h/g/p/issues/9/ https://h/g/sub/p/-/issues/10 x/#11 &#12 y&#13')).toEqual([
      { path: 'a-b.c/d_e', iid: 7 },
      { path: 'g/sub/p', iid: 10 },
    ]);
    expect(closingIssueReferences('Fixes issues #1 , and #2,#3 issue g/p#4 http://h/g/p/issues/5x and #6')).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
      { path: null, iid: 3 },
      { path: 'g/p', iid: 4 },
      { path: 'g/p', iid: 5 },
    ]);
    // A Jira key continues the list but takes no separator after it.
    expect(closingIssueReferences('Closes: JIRA-1#2 FOO_2-3 #4')).toEqual([{ path: 'JIRA-1', iid: 2 }]);
    expect(closingIssueReferences('prefixes #1, Closesx #2, Closes  #3')).toEqual([{ path: null, iid: 3 }]);
  });

  it('finds what GitLab’s regular expressions find (seeded random texts)', () => {
    let seed = 4242;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    let closing = 0;
    for (let k = 0; k < 10_000; k += 1) {
      let text = random(3) === 0 ? PIECES[random(PIECES.length)]! : '';
      text += KEYWORDS[random(KEYWORDS.length)]! + [':', ' ', ': ', '  '][random(4)]!;
      for (let n = random(8); n > 0; n -= 1) text += random(6) === 0 ? `${KEYWORDS[random(KEYWORDS.length)]} ` : PIECES[random(PIECES.length)];
      const expected = oracleClosing(text);
      if (expected.length > 0) closing += 1;
      expect([text, issueReferences(text)]).toEqual([text, oracleReferences(text)]);
      expect([text, closingIssueReferences(text)]).toEqual([text, expected]);
    }
    expect(closing).toBeGreaterThan(1_000);
  });

  // Each of these took the regular expressions seconds to minutes (their cost grows with the
  // square of the length); the vitest timeout fails the test if they come back.
  it('reads hostile texts of ~100 KB in time proportional to their length', () => {
    const long = 'a/'.repeat(50_000);
    expect(closingIssueReferences(`Closes ${long}`)).toEqual([]);
    expect(closingIssueReferences(`Closes ${long}#1`)).toEqual([]);
    expect(closingIssueReferences(`Closes ${long}a#1`)).toEqual([{ path: `${long}a`, iid: 1 }]);
    expect(closingIssueReferences('Closes #1, '.repeat(9_000) + 'and #2')).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
    ]);
    expect(closingIssueReferences(`fixes ${'issues '.repeat(14_000)}#3`)).toEqual([]);
    expect(closingIssueReferences(`Closes #1${' '.repeat(100_000)}x`)).toEqual([{ path: null, iid: 1 }]);
    expect(closingIssueReferences(`Closes #1${' '.repeat(100_000)}and #2`)).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
    ]);
    expect(closingIssueReferences(`Closes #1,${' '.repeat(100_000)}#2`)).toEqual([
      { path: null, iid: 1 },
      { path: null, iid: 2 },
    ]);
    expect(closingIssueReferences(`Closes ${'a-'.repeat(50_000)}`)).toEqual([]);
    expect(closingIssueReferences(`${'Fix '.repeat(25_000)}#4`)).toEqual([{ path: null, iid: 4 }]);
    expect(closingIssueReferences(`Closes #${'1'.repeat(100_000)}`)).toEqual([]);

    const dashes = 'a-'.repeat(50_000);
    expect(issueReferences(dashes)).toEqual([]);
    expect(issueReferences(`${dashes}#5`)).toEqual([{ path: dashes, iid: 5 }]);
    expect(issueReferences('.'.repeat(100_000))).toEqual([]);
    expect(issueReferences(`${'x.'.repeat(50_000)}#6a`)).toEqual([]);
    expect(issueReferences(`http://h/${long}issues/7`)).toEqual([{ path: long.slice(0, -1), iid: 7 }]);
    expect(issueReferences(`http://h/${'issues/1a/'.repeat(10_000)}`)).toEqual([]);
    expect(issueReferences('http://'.repeat(14_000))).toEqual([]);
  });
});
