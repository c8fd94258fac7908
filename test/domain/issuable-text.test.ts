import { describe, expect, it } from 'vitest';
import {
  directlyAddressedUsernames,
  isWorkInProgress,
  matchesWipFilter,
  mentionedUsernames,
  taskCompletionStatus,
  wiplessTitle,
  wipTitle,
} from '../../src/domain/issuable-text.js';

describe('taskCompletionStatus (Taskable)', () => {
  it.each([
    ['- [ ] a\n- [x] b\n- [X] c', 3, 2],
    ['* [ ] a\n+ [x] b', 2, 1],
    ['1. [ ] one\n2. [x] two', 2, 1],
    // Nested and quoted items.
    ['- [ ] a\n  - [x] nested', 2, 1],
    ['> - [x] quoted', 1, 1],
    // GitLab's spec: items need a list marker, a space, a checkbox, a space and text.
    ['[ ] not a list item', 0, 0],
    ['-[ ] no space', 0, 0],
    ['- [ ]', 0, 0],
    ['- [ ]  ', 1, 0],
    ['- [y] not a checkbox', 0, 0],
    ['- [  ] two spaces', 0, 0],
    ['text - [ ] mid-line', 0, 0],
    // Read on the raw text: an item in a code block counts, as in GitLab.
    ['```\n- [ ] in code\n```', 1, 0],
    ['', 0, 0],
    ['   ', 0, 0],
  ])('%j → %i items, %i completed', (description, count, completed) => {
    expect(taskCompletionStatus(description)).toEqual({ count, completed_count: completed });
  });

  it('answers zero for no description', () => {
    expect(taskCompletionStatus(null)).toEqual({ count: 0, completed_count: 0 });
    expect(taskCompletionStatus(undefined)).toEqual({ count: 0, completed_count: 0 });
  });

  it('reads \\r\\n lines as GitLab (the carriage return is part of the label)', () => {
    expect(taskCompletionStatus('- [ ] a\r\n- [x] b\r\n')).toEqual({ count: 2, completed_count: 1 });
  });

  it("reads over line breaks as Ruby's \\s does, within eight lines of the item's first", () => {
    // The markers of one item on two lines; a checkbox whose text is the next line (which is then no item of its own).
    expect(taskCompletionStatus('-\n\n- [ ] a')).toEqual({ count: 1, completed_count: 0 });
    expect(taskCompletionStatus('- [ ]\n- [x] b')).toEqual({ count: 1, completed_count: 0 });
    expect(taskCompletionStatus(`-${'\n'.repeat(7)}[x] a`)).toEqual({ count: 1, completed_count: 1 });
    expect(taskCompletionStatus(`-${'\n'.repeat(8)}[x] a`)).toEqual({ count: 0, completed_count: 0 });
  });

  it('reads a description of marker-only lines in time linear in its length (issue 20: it was quadratic)', () => {
    // 40,000 lines: unbounded, each line start read the rest of the run again (minutes); this must end well inside the test timeout.
    const markers = '- - - - - - - - - -\n'.repeat(40_000);
    expect(taskCompletionStatus(markers)).toEqual({ count: 0, completed_count: 0 });
    expect(taskCompletionStatus(`${markers}- [x] done`)).toEqual({ count: 1, completed_count: 1 });
  });
});

describe('mentionedUsernames (User.reference_pattern via UserReferenceFilter)', () => {
  it.each([
    ['hello @alice', ['alice']],
    ['@alice and @bob', ['alice', 'bob']],
    ['@alice @Alice @ALICE', ['alice']],
    ['cc @group/subgroup', ['group/subgroup']],
    ['@all please', ['all']],
    ['@user.name_x-y', ['user.name_x-y']],
    // A trailing dot is not part of the name; `.git` and `.atom` endings are cut back.
    ['thanks @alice.', ['alice']],
    ['@alice.git', ['alice.gi']],
    // Not after a word character: e-mail addresses are not mentions.
    ['mail alice@example.com', []],
    ['(@alice)', ['alice']],
    ['é@alice', ['alice']],
    ['@-alice', []],
    ['@', []],
  ])('%j → %j', (text, names) => {
    expect(mentionedUsernames(text)).toEqual(names);
  });

  it('skips code, links and URLs, as Banzai skips a, code and pre', () => {
    const text = [
      'real @alice',
      '`@code_span` and ``@double `tick` @double2``',
      '```',
      '@fenced',
      '```',
      '',
      '    @indented',
      '',
      '[@linked](https://example.com) <a href="x">@html</a> <code>@html_code</code>',
      'https://example.com/@url <https://example.com/@autolink>',
      '<!-- @comment -->',
      'after @bob',
    ].join('\n');
    expect(mentionedUsernames(text)).toEqual(['alice', 'bob']);
  });

  it('reads a mention in a list item continuation (not an indented code block)', () => {
    expect(mentionedUsernames('- item\n\n    @carol in the item')).toEqual(['carol']);
  });

  it('answers nothing for no text', () => {
    expect(mentionedUsernames(null)).toEqual([]);
    expect(mentionedUsernames('')).toEqual([]);
  });
});

describe('directlyAddressedUsernames (DirectlyAddressedUserParser, location: :beginning)', () => {
  it.each([
    ['@alice please review', ['alice']],
    ['@alice @bob please review', ['alice', 'bob']],
    ['@alice\n@bob on the next line', ['alice', 'bob']],
    ['@alice, @bob', ['alice']],
    ["@alice's change", ['alice']],
    ['Hi @alice', []],
    ['  @alice indented a little', ['alice']],
    // Every top-level paragraph is read.
    ['Intro\n\n@carol over to you', ['carol']],
    // Not a paragraph: headings, lists, quotes, code.
    ['# @alice heading', []],
    ['- @alice in a list', []],
    ['> @alice quoted', []],
    ['    @alice indented code', []],
    ['```\n@alice\n```', []],
    ['@alice\n===', []],
    // A code span or a link at the start is not a mention and ends the run.
    ['`x` @alice', []],
    ['[link](https://x.test) @alice', []],
    ['**@alice**', []],
    ['', []],
  ])('%j → %j', (text, names) => {
    expect(directlyAddressedUsernames(text)).toEqual(names);
  });

  it('ends the run at a name that does not resolve (GitLab leaves it as text)', () => {
    const known = new Set(['bob']);
    expect(directlyAddressedUsernames('@ghost @bob hello', (name) => known.has(name))).toEqual([]);
    expect(directlyAddressedUsernames('@bob @ghost hello', (name) => known.has(name))).toEqual(['bob']);
  });

  it('counts a name once, without case', () => {
    expect(directlyAddressedUsernames('@Alice @alice\n\n@ALICE')).toEqual(['Alice']);
  });
});

describe('work in progress (MergeRequest::WIP_REGEX, wip_match)', () => {
  it.each([
    ['WIP: fix', true],
    ['wip: fix', true],
    ['[WIP] fix', true],
    ['[wip]fix', true],
    ['WIP fix', true],
    ['  WIP: leading spaces', true],
    // GitLab 12's `\A*` anchors nothing.
    ['Fix WIP: handling', true],
    ['Fix [WIP] later', true],
    ['Fix wip handling', true],
    ['WIP', false],
    ['WIPfix', false],
    ['Swipe left', false],
    ['Fix the wiper', false],
    ['Draft: fix', false],
  ])('isWorkInProgress(%j) is %s', (title, wip) => {
    expect(isWorkInProgress(title)).toBe(wip);
  });

  it.each([
    ['WIP: fix', true],
    ['wip fix', true],
    ['[Wip] fix', true],
    ['  WIP: leading spaces', false],
    ['Fix WIP: handling', false],
    ['WIPfix', false],
  ])('matchesWipFilter(%j) is %s', (title, wip) => {
    expect(matchesWipFilter(title)).toBe(wip);
  });

  it('removes and adds the marker', () => {
    expect(wiplessTitle('WIP: fix')).toBe('fix');
    expect(wiplessTitle('[WIP] WIP: fix')).toBe('fix');
    expect(wiplessTitle('fix')).toBe('fix');
    expect(wipTitle('fix')).toBe('WIP: fix');
    expect(wipTitle('[WIP] fix')).toBe('[WIP] fix');
  });
});
