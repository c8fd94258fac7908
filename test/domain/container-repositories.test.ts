import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  type CleanupRules,
  type CleanupTag,
  PATTERN_TOO_LARGE,
  programSizeBound,
  REGEXP_MAX_LENGTH,
  REGEXP_MAX_PROGRAM,
  regexpError,
  tagsToDelete,
} from '../../src/domain/container-repositories/cleanup.js';
import {
  CLEANUP_TOO_SOON,
  type ContainerRepositoryCommand,
  type ContainerRepositoryEvent,
  containerRepositoryClaims,
  containerRepositoryDecider,
} from '../../src/domain/container-repositories/decider.js';
import { isImagePath, isTagName, projectPathCandidates, repositoryName } from '../../src/domain/container-repositories/path.js';
import { deciderSpec, rejected } from '../support/decider.js';

// ───────────────────────────── The bulk deletion rules ─────────────────────────────

const NOW = new Date('2030-01-10T12:00:00.000Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3600_000).toISOString();
const tag = (name: string, ageHours: number | null): CleanupTag => ({ name, createdAt: ageHours === null ? null : hoursAgo(ageHours) });
const rules = (over: Partial<CleanupRules> = {}): CleanupRules => ({ nameRegexDelete: '.*', nameRegexKeep: null, keepN: null, olderThan: null, ...over });
const deleted = (tags: CleanupTag[], over: Partial<CleanupRules> = {}) => tagsToDelete(tags, rules(over), NOW);

/** v1 the oldest … v4 the newest, `latest` the newest of all, `stable` in between. */
const TAGS = [tag('v1', 96), tag('v2', 72), tag('stable', 60), tag('v3', 48), tag('v4', 24), tag('latest', 1)];

describe('bulk tag deletion rules (CleanupTagsService, GitLab 12.10)', () => {
  it("`.*` deletes every tag but `latest`, oldest first", () => {
    expect(deleted(TAGS)).toEqual(['v1', 'v2', 'stable', 'v3', 'v4']);
  });

  it('never deletes `latest`, even named exactly', () => {
    expect(deleted(TAGS, { nameRegexDelete: 'latest' })).toEqual([]);
  });

  it('deletes only full matches of name_regex', () => {
    expect(deleted(TAGS, { nameRegexDelete: 'v' })).toEqual([]);
    expect(deleted(TAGS, { nameRegexDelete: 'v[12]' })).toEqual(['v1', 'v2']);
    expect(deleted(TAGS, { nameRegexDelete: 'v1|v3' })).toEqual(['v1', 'v3']);
    expect(deleted(TAGS, { nameRegexDelete: 'table' })).toEqual([]);
  });

  it('keeps what name_regex_keep matches in full, over name_regex', () => {
    expect(deleted(TAGS, { nameRegexKeep: 'v[34]' })).toEqual(['v1', 'v2', 'stable']);
    expect(deleted(TAGS, { nameRegexKeep: '.*' })).toEqual([]);
    expect(deleted(TAGS, { nameRegexKeep: 'v' })).toEqual(['v1', 'v2', 'stable', 'v3', 'v4']);
  });

  it('keeps the keep_n newest matches', () => {
    expect(deleted(TAGS, { keepN: 2 })).toEqual(['v1', 'v2', 'stable']);
    expect(deleted(TAGS, { keepN: 0 })).toEqual(['v1', 'v2', 'stable', 'v3', 'v4']);
    expect(deleted(TAGS, { keepN: 10 })).toEqual([]);
  });

  it('counts keep_n among the matches only, not among all tags', () => {
    expect(deleted(TAGS, { nameRegexDelete: 'v.*', keepN: 1 })).toEqual(['v1', 'v2', 'v3']);
  });

  it('counts a tag without a creation time as the newest for keep_n, and never as older than older_than', () => {
    const tags = [tag('a', 10), tag('b', null), tag('c', 5)];
    expect(deleted(tags, { keepN: 1 })).toEqual(['a', 'c']);
    expect(deleted(tags, { olderThan: '1h' })).toEqual(['a', 'c']);
  });

  it('deletes only tags older than older_than, in ChronicDuration’s human form', () => {
    expect(deleted(TAGS, { olderThan: '50h' })).toEqual(['v1', 'v2', 'stable']);
    expect(deleted(TAGS, { olderThan: '2d' })).toEqual(['v1', 'v2', 'stable']);
    expect(deleted(TAGS, { olderThan: '3 days' })).toEqual(['v1']);
    expect(deleted(TAGS, { olderThan: '1month' })).toEqual([]);
    expect(deleted([tag('old', 24 * 31)], { olderThan: '1month' })).toEqual(['old']);
  });

  it('applies the rules together: name, keep, keep_n, then older_than', () => {
    // Matches v1–v4 and stable, stable kept by name; of v1–v4 the newest (v4) kept; of v1–v3 those older than 60h: v1, v2.
    expect(deleted(TAGS, { nameRegexDelete: 'v.*|stable', nameRegexKeep: 'stable', keepN: 1, olderThan: '60h' })).toEqual(['v1', 'v2']);
    // keep_n counts before older_than: keeping 3 of v1–v4 leaves v1 alone, old enough.
    expect(deleted(TAGS, { nameRegexDelete: 'v.*', keepN: 3, olderThan: '1h' })).toEqual(['v1']);
  });

  it("deletes nothing where GitLab's worker would fail: an invalid regexp, an unreadable older_than, a negative keep_n", () => {
    expect(deleted(TAGS, { nameRegexDelete: '(' })).toEqual([]);
    expect(deleted(TAGS, { nameRegexKeep: '(?=x)' })).toEqual([]);
    expect(deleted(TAGS, { olderThan: 'banana' })).toEqual([]);
    expect(deleted(TAGS, { keepN: -1 })).toEqual([]);
  });

  it("reads regexps as RE2 does (GitLab's UntrustedRegexp): no lookaround, no backreference", () => {
    expect(regexpError('v[0-9]+')).toBeUndefined();
    expect(regexpError('(a')).toMatch(/missing closing \)/);
    expect(regexpError('(?=a)')).toBeDefined();
    expect(regexpError('(a)\\1')).toBeDefined();
  });

  it("answers RE2's 'pattern too large' for a pattern too long, or whose program may be too big, without compiling it", () => {
    expect(regexpError('a'.repeat(REGEXP_MAX_LENGTH))).toBe(PATTERN_TOO_LARGE);
    expect(regexpError('a'.repeat(REGEXP_MAX_LENGTH + 1))).toBe(PATTERN_TOO_LARGE);
    expect(regexpError(`[${'a'.repeat(REGEXP_MAX_LENGTH)}]`)).toBe(PATTERN_TOO_LARGE);
    expect(regexpError('x{1000}'.repeat(5))).toBe(PATTERN_TOO_LARGE);
    expect(regexpError('x{0001000,0001000}'.repeat(5))).toBe(PATTERN_TOO_LARGE);
    expect(regexpError('((a|b){1000})')).toBeUndefined();
    expect(regexpError(`[${'a'.repeat(REGEXP_MAX_LENGTH - 2)}]`)).toBeUndefined();
    // re2js's own limits stay its own: a nested repetition past 1000 is a syntax error.
    expect(regexpError('(a{10}){101}')).toMatch(/invalid repeat count/);
  });

  it('bounds the program from above: programSizeBound is never below what re2js compiles', () => {
    const token = fc.constantFrom('a', 'é', '.', '\\d', '\\pL', '[a-z]', '[^]x]', '[[:alpha:]]', '\\x{41}', '\\Q{9}\\E', '^', '$', '\\b', '|', '(', ')', '(?:', '(?i)', '*', '+', '?', '*?', '{3}', '{2,}', '{0,40}', '{7,9}', '{}', '{,3}', '(a*)*', '((a?)+)*', '(|a)*', '()', '(|)');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 24 }), (tokens) => {
        const pattern = tokens.join('');
        let size: number;
        try {
          size = RE2JS.compile(pattern).programSize();
        } catch {
          return;
        }
        expect(programSizeBound(pattern), pattern).toBeGreaterThanOrEqual(size);
      }),
      { numRuns: 5000, seed: 20_01 },
    );
    expect(programSizeBound('.{0,1000}'.repeat(5))).toBeGreaterThan(REGEXP_MAX_PROGRAM);
    const nested = '(((((a*)*)*)*)*)'.repeat(300);
    expect(programSizeBound(nested)).toBeGreaterThanOrEqual(RE2JS.compile(nested).programSize());
  });

  it('matches in linear time: a pattern that backtracks exponentially in JavaScript returns (the test would time out otherwise)', () => {
    expect(deleted([tag(`${'a'.repeat(100)}!`, 5)], { nameRegexDelete: '(a+)+' })).toEqual([]);
  });
});

// ───────────────────────────── Image paths ─────────────────────────────

describe('image paths (ContainerRegistry::Path)', () => {
  it('offers the path and the path less one or two nodes as the project, longest first', () => {
    expect(projectPathCandidates('group/sub/project/images/web')).toEqual(['group/sub/project/images/web', 'group/sub/project/images', 'group/sub/project']);
    expect(projectPathCandidates('group/project')).toEqual(['group/project']);
    expect(projectPathCandidates('group/project/web')).toEqual(['group/project/web', 'group/project']);
  });

  it("names the repository by what follows the project's path", () => {
    expect(repositoryName('group/project', 'group/project')).toBe('');
    expect(repositoryName('group/project/images/web', 'group/project')).toBe('images/web');
  });

  it('holds paths and tags to the distribution grammar', () => {
    expect(isImagePath('group/project')).toBe(true);
    expect(isImagePath('project')).toBe(false);
    expect(isImagePath('Group/project')).toBe(false);
    expect(isImagePath('group//project')).toBe(false);
    expect(isImagePath(Array.from({ length: 20 }, () => 'a').join('/'))).toBe(false);
    expect(isTagName('v1.0-rc_1')).toBe(true);
    expect(isTagName('.hidden')).toBe(false);
    expect(isTagName('a'.repeat(129))).toBe(false);
  });
});

// ───────────────────────────── The decider ─────────────────────────────

const { on } = deciderSpec(containerRepositoryDecider);
const ID = 3;
const PROJECT = 8;
const ref = { id: ID, project_id: PROJECT };
const DIGEST = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;

const created: ContainerRepositoryEvent = { type: 'ContainerRepositoryCreated', data: { ...ref, name: 'web' } };
const pushed = (name: string, digest = DIGEST, createdAt = hoursAgo(5), eventId: string | null = null): ContainerRepositoryEvent => ({
  type: 'ContainerRepositoryTagPushed',
  data: { ...ref, tag: name, digest, revision: 'c'.repeat(64), total_size: 1024, created_at: createdAt, registry_event_id: eventId },
});
const tagDeleted = (name: string, eventId: string | null = null): ContainerRepositoryEvent => ({ type: 'ContainerRepositoryTagDeleted', data: { ...ref, tag: name, registry_event_id: eventId } });
const push = (name: string, digest = DIGEST, eventId: string | null = null): ContainerRepositoryCommand => ({
  type: 'PushTag',
  projectId: PROJECT,
  name: 'web',
  registryEventId: eventId,
  tag: name,
  digest,
  revision: 'c'.repeat(64),
  totalSize: 1024,
  createdAt: hoursAgo(5),
});
const cleanupScheduled = (at: string): ContainerRepositoryEvent => ({
  type: 'ContainerRepositoryCleanupScheduled',
  data: { ...ref, name_regex_delete: '.*', name_regex_keep: null, keep_n: 1, older_than: null, requested_at: at },
});
const scheduleCleanup = (at: string): ContainerRepositoryCommand => ({ type: 'ScheduleCleanup', rules: rules({ keepN: 1 }), at });

describe('container repository decider', () => {
  it('creates the repository on its first push, then records the tag', () => {
    on(ID).given().when(push('v1')).then([created, pushed('v1')]);
    on(ID).given(created, pushed('v1')).when(push('v2', OTHER)).then([pushed('v2', OTHER)]);
  });

  it('records a tag moved to another manifest, and nothing for the same manifest again', () => {
    on(ID).given(created, pushed('v1')).when(push('v1', OTHER)).then([pushed('v1', OTHER)]);
    on(ID).given(created, pushed('v1')).when(push('v1')).then([]);
  });

  it('applies a registry notification once, by its id', () => {
    on(ID).given(created, pushed('v1', DIGEST, hoursAgo(5), 'evt-1')).when(push('v2', OTHER, 'evt-1')).then([]);
    on(ID)
      .given(created, pushed('v1'), tagDeleted('v1', 'evt-2'))
      .when({ type: 'DeleteFromRegistry', tag: null, digest: DIGEST, registryEventId: 'evt-2' })
      .then([]);
  });

  it('deletes a tag from the registry, or every tag of a deleted manifest', () => {
    on(ID).given(created, pushed('v1'), pushed('v2')).when({ type: 'DeleteFromRegistry', tag: 'v1', digest: null, registryEventId: null }).then([tagDeleted('v1')]);
    on(ID)
      .given(created, pushed('v1'), pushed('v2'), pushed('v3', OTHER))
      .when({ type: 'DeleteFromRegistry', tag: null, digest: DIGEST, registryEventId: 'e' })
      .then([tagDeleted('v1', 'e'), tagDeleted('v2')]);
  });

  it('deletes one tag through the API, and answers 404 Tag for one it does not have', () => {
    on(ID).given(created, pushed('v1')).when({ type: 'DeleteTag', tag: 'v1' }).then([tagDeleted('v1')]);
    on(ID).given(created, pushed('v1')).when({ type: 'DeleteTag', tag: 'v9' }).then(rejected('not_found', { subject: 'Tag' }));
  });

  it('schedules a bulk deletion at most once an hour per repository (by the command clock)', () => {
    const first = '2030-01-10T12:00:00.000Z';
    on(ID).given(created).when(scheduleCleanup(first)).then([cleanupScheduled(first)]);
    on(ID).given(created, cleanupScheduled(first)).when(scheduleCleanup('2030-01-10T12:59:59.999Z')).then(rejected('bad_request', { text: CLEANUP_TOO_SOON }));
    on(ID).given(created, cleanupScheduled(first)).when(scheduleCleanup('2030-01-10T13:00:00.000Z')).then([cleanupScheduled('2030-01-10T13:00:00.000Z')]);
  });

  it("runs a scheduled bulk deletion with the rules at the reactor's time", () => {
    on(ID)
      .given(created, pushed('v1', DIGEST, hoursAgo(30)), pushed('v2', DIGEST, hoursAgo(20)), pushed('latest', DIGEST, hoursAgo(40)), pushed('v3', DIGEST, hoursAgo(10)))
      .when({ type: 'CleanUpTags', rules: rules({ keepN: 1 }), now: NOW.toISOString() })
      .then([tagDeleted('v1'), tagDeleted('v2')]);
  });

  it('schedules a removal once, removes the repository, and refuses what comes to it after', () => {
    const scheduled: ContainerRepositoryEvent = { type: 'ContainerRepositoryDeletionScheduled', data: ref };
    const removed: ContainerRepositoryEvent = { type: 'ContainerRepositoryDeleted', data: ref };
    on(ID).given(created).when({ type: 'ScheduleDeletion' }).then([scheduled]);
    on(ID).given(created, scheduled).when({ type: 'ScheduleDeletion' }).then([]);
    on(ID).given(created, scheduled).when({ type: 'DeleteRepository' }).then([removed]);
    on(ID).given(created, scheduled, removed).when({ type: 'DeleteRepository' }).then(rejected('not_found'));
    on(ID).given(created, scheduled, removed).when(push('v1')).then(rejected('not_found'));
    on(ID).given().when({ type: 'DeleteTag', tag: 'v1' }).then(rejected('not_found'));
  });

  it("claims the repository's path within its project, and gives it back on removal", () => {
    const state = on(ID).given(created).state;
    expect(containerRepositoryClaims(created, on(ID).given().state).acquire.map((c) => c.key)).toEqual([`${PROJECT}/web`]);
    expect(containerRepositoryClaims({ type: 'ContainerRepositoryDeleted', data: ref }, state).release.map((c) => c.key)).toEqual([`${PROJECT}/web`]);
  });
});
