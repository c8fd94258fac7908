import { describe, expect, it } from 'vitest';
import { crossReferenceBody, mentionedReferences, projectReferenceBase } from '../../src/domain/notes/cross-references.js';

describe('cross-references', () => {
  it('finds the issues and merge requests a text references, once each, none in code', () => {
    expect(mentionedReferences('See #1, group/other#2 and !3', 'also other!4, #1 again, `#5`, https://gitlab.example.com/g/p/-/merge_requests/6\n```\n#7\n```')).toEqual([
      { type: 'Issue', path: null, iid: 1 },
      { type: 'Issue', path: 'group/other', iid: 2 },
      { type: 'MergeRequest', path: null, iid: 3 },
      { type: 'MergeRequest', path: 'other', iid: 4 },
      { type: 'MergeRequest', path: 'g/p', iid: 6 },
    ]);
    expect(mentionedReferences('no references here', null, undefined)).toEqual([]);
    expect(mentionedReferences('x#abc#5 &#6 a/#7 -#8 -grp#9')).toEqual([
      { type: 'Issue', path: null, iid: 8 },
      { type: 'Issue', path: 'grp', iid: 9 },
    ]);
  });

  it('reads a megabyte of path characters or backticks in one pass (no backtracking over them)', () => {
    const [ref] = mentionedReferences(`${'a.'.repeat(500_000)}#1 ${'`'.repeat(1_000_000)}`);
    expect(ref).toMatchObject({ type: 'Issue', iid: 1 });
    expect(ref!.path!.length).toBeLessThanOrEqual(256);
  });

  it('words the note as SystemNotes::IssuablesService#cross_reference, the mentioner seen from the noteable', () => {
    expect(projectReferenceBase('g/p', 'g/p')).toBe('');
    expect(projectReferenceBase('g/q', 'g/p')).toBe('q');
    expect(projectReferenceBase('h/q', 'g/p')).toBe('h/q');
    expect(crossReferenceBody({ type: 'Issue', projectPath: 'g/p', iid: 1 }, 'g/p')).toBe('mentioned in issue #1');
    expect(crossReferenceBody({ type: 'MergeRequest', projectPath: 'g/q', iid: 2 }, 'g/p')).toBe('mentioned in merge request q!2');
    expect(crossReferenceBody({ type: 'Commit', projectPath: 'g/p', sha: 'a'.repeat(40) }, 'g/p')).toBe(`mentioned in commit ${'a'.repeat(40)}`);
    expect(crossReferenceBody({ type: 'Commit', projectPath: 'h/q', sha: 'b'.repeat(40) }, 'g/p')).toBe(`mentioned in commit h/q@${'b'.repeat(40)}`);
  });
});
