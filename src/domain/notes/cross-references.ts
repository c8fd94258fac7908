import type { IssueReference } from '../issues/references.js';

/**
 * Cross-references: GitLab 12's "mentioned in …" system notes (Mentionable#create_cross_references!,
 * SystemNoteService.cross_reference). An issue, a merge request, a comment or a pushed commit
 * that references an issue or a merge request writes, on that one, "mentioned in issue #1",
 * "mentioned in merge request group/project!3", "mentioned in commit <sha>". Their source is
 * another stream's event, so they are kept by a read model (src/projections/cross-references/);
 * this is the pure part: the references of a text and the note's wording.
 */

/** What mentions (GitLab's Mentionable#local_reference: a comment's noteable). */
export type MentionerType = 'Issue' | 'MergeRequest' | 'Commit';
/** What is mentioned (forgelog's targets; GitLab also writes them on commits and epics). */
export type MentionedType = 'Issue' | 'MergeRequest';

export interface MentionedReference extends IssueReference {
  readonly type: MentionedType;
}

const PATH_CHAR = /[a-zA-Z0-9_.\-/]/;
const BEFORE_REFERENCE = /[\w/#&]/;
/** The longest project path a reference may name (Gitlab's full paths are at most 255 characters). */
const MAX_PATH = 255;
const LINK = /https?:\/\/[^\s/]+\/([a-zA-Z0-9_.][a-zA-Z0-9_.\-]*(?:\/[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*)*)\/(?:-\/)?(issues|merge_requests)\/(\d+)(?![\w/])/g;

/** Mentionable#matches_cross_reference_regex?: whether a text may reference an issue or a merge request at all. */
const MAY_REFERENCE = /[#!]\d|\/(?:issues|merge_requests)\/\d/;

/** Code is no reference (Banzai's reference filters skip `code` and `pre`): fenced blocks and code spans are blanked. */
const withoutCode = (text: string) => text.replace(/^( {0,3})(```|~~~)[^\n]*\n[\s\S]*?(?:^\1?\2[^\n]*$|(?![\s\S]))/gm, '').replace(/`[^`]*`/g, '');

/** GitLab's project path pattern: segments of `[a-zA-Z0-9_.][a-zA-Z0-9_.-]*` joined by slashes. */
const isPath = (path: string) => path.split('/').every((segment) => /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/.test(segment));

/**
 * Issue.reference_pattern and MergeRequest.reference_pattern (`#1`, `project!2`, `group/project#3`)
 * as the regular expression `(?<![\w/#&])(PATH)?#\d+(?!\w)` finds them, found from each `#n` or
 * `!n` backwards over at most MAX_PATH characters: the leftmost start whose path is one and is not
 * preceded by a word character, a slash, `#` or `&` (no backtracking over a long run of path characters).
 */
function shortReferences(text: string): { at: number; ref: MentionedReference }[] {
  const found: { at: number; ref: MentionedReference }[] = [];
  for (const m of text.matchAll(/[#!](\d+)(?!\w)/g)) {
    const sign = m.index;
    let runStart = sign;
    while (runStart > 0 && sign - runStart <= MAX_PATH && PATH_CHAR.test(text[runStart - 1]!)) runStart -= 1;
    for (let start = runStart; start <= sign; start += 1) {
      if (start > 0 && BEFORE_REFERENCE.test(text[start - 1]!)) continue;
      const path = text.slice(start, sign);
      if (path !== '' && !isPath(path)) continue;
      const iid = Number(m[1]);
      if (Number.isSafeInteger(iid)) found.push({ at: start, ref: { type: text[sign] === '#' ? 'Issue' : 'MergeRequest', path: path === '' ? null : path, iid } });
      break;
    }
  }
  return found;
}

/** The issues and merge requests a text references (Gitlab::ReferenceExtractor#issues, #merge_requests), issues first, once each. */
export function mentionedReferences(...texts: readonly (string | null | undefined)[]): MentionedReference[] {
  const text = texts.filter((t): t is string => !!t).join('\n\n');
  if (!MAY_REFERENCE.test(text)) return [];
  const plain = withoutCode(text);
  const found = shortReferences(plain);
  for (const m of plain.matchAll(LINK)) {
    const iid = Number(m[3]);
    if (Number.isSafeInteger(iid)) found.push({ at: m.index, ref: { type: m[2] === 'issues' ? 'Issue' : 'MergeRequest', path: m[1]!, iid } });
  }
  const seen = new Set<string>();
  const refs = found
    .sort((a, b) => a.at - b.at)
    .map((f) => f.ref)
    .filter((ref) => !seen.has(`${ref.type} ${ref.path} ${ref.iid}`) && seen.add(`${ref.type} ${ref.path} ${ref.iid}`));
  return [...refs.filter((r) => r.type === 'Issue'), ...refs.filter((r) => r.type === 'MergeRequest')];
}

/**
 * Project#to_reference_base(from): nothing within the project itself, the project's path within
 * the same namespace, its full path from elsewhere.
 */
export function projectReferenceBase(path: string, fromPath: string): string {
  if (path === fromPath) return '';
  const namespace = (p: string) => p.slice(0, p.lastIndexOf('/'));
  return namespace(path) === namespace(fromPath) ? path.slice(path.lastIndexOf('/') + 1) : path;
}

/** A mentioner as the note names it: its project's path, and its iid (an issue, a merge request) or SHA (a commit). */
export type MentionerRef = { readonly type: 'Issue' | 'MergeRequest'; readonly projectPath: string; readonly iid: number } | { readonly type: 'Commit'; readonly projectPath: string; readonly sha: string };

/**
 * What a row of the read model says of its mentioner: GitLab's system note actions
 * `cross_reference` (mentioned it), and EE's `relate` / `unrelate` (an issue link made or removed),
 * `epic_issue_added` / `epic_issue_removed` (on an epic: the issue put in it, taken out) and
 * EE's `epic_issue_moved` (the issue moved from another epic: `_from` on the epic it came to,
 * `_to` on the one it left).
 */
export const CROSS_REFERENCE_ACTIONS = ['cross_reference', 'relate', 'unrelate', 'epic_issue_added', 'epic_issue_removed', 'epic_issue_moved_from', 'epic_issue_moved_to'] as const;
export type CrossReferenceAction = (typeof CROSS_REFERENCE_ACTIONS)[number];

/**
 * EE's notes on an epic (SystemNoteService.epic_issue, epic_issue_moved): "added issue
 * project#1", "removed issue group/project#1", "added issue project#1 from epic &2", "moved issue
 * project#1 to epic &3". The issue is named from the epic's group (Issue#to_reference(group): its
 * project's path within the group, else its full path), the other epic by Epic#to_reference(group)
 * (`&2` in the same group, else `group/path&2`).
 */
export function epicNoteBody(action: CrossReferenceAction, issue: { readonly projectPath: string; readonly namespaceId: number; readonly iid: number }, group: { readonly id: number; readonly fullPath: string }, other: { readonly groupId: number; readonly fullPath: string; readonly iid: number } | null): string | null {
  const issueRef = `${issue.namespaceId === group.id ? issue.projectPath.slice(issue.projectPath.lastIndexOf('/') + 1) : issue.projectPath}#${issue.iid}`;
  const otherRef = other && `${other.groupId === group.id ? '' : other.fullPath}&${other.iid}`;
  switch (action) {
    case 'epic_issue_added':
      return `added issue ${issueRef}`;
    case 'epic_issue_removed':
      return `removed issue ${issueRef}`;
    case 'epic_issue_moved_from':
      return otherRef && `added issue ${issueRef} from epic ${otherRef}`;
    case 'epic_issue_moved_to':
      return otherRef && `moved issue ${issueRef} to epic ${otherRef}`;
    default:
      return null;
  }
}

/** The mentioner's Mentionable#gfm_reference (Commit#to_reference names the whole SHA) or, `short`, its to_reference, seen from the noteable's project. */
function referenceOf(mentioner: MentionerRef, targetProjectPath: string, short: boolean): string {
  const base = projectReferenceBase(mentioner.projectPath, targetProjectPath);
  switch (mentioner.type) {
    case 'Issue':
      return `${short ? '' : 'issue '}${base}#${mentioner.iid}`;
    case 'MergeRequest':
      return `${short ? '' : 'merge request '}${base}!${mentioner.iid}`;
    case 'Commit':
      return `${short ? '' : 'commit '}${base === '' ? '' : `${base}@`}${mentioner.sha}`;
  }
}

/**
 * The note's text: SystemNotes::IssuablesService#cross_reference ("mentioned in issue #1",
 * "mentioned in merge request other!2", "mentioned in commit group/project@<sha>"), EE's
 * #relate_issue ("marked this issue as related to #1") and #unrelate_issue ("removed the
 * relation with #1").
 */
export function crossReferenceBody(mentioner: MentionerRef, targetProjectPath: string, action: CrossReferenceAction = 'cross_reference'): string {
  switch (action) {
    case 'cross_reference':
      return `mentioned in ${referenceOf(mentioner, targetProjectPath, false)}`;
    case 'relate':
      return `marked this issue as related to ${referenceOf(mentioner, targetProjectPath, true)}`;
    case 'unrelate':
      return `removed the relation with ${referenceOf(mentioner, targetProjectPath, true)}`;
    default:
      return `mentioned in ${referenceOf(mentioner, targetProjectPath, false)}`;
  }
}

/**
 * The notes one source event may write on one noteable: their ids are 10·p + k, p the source
 * event's position (src/domain/issuable-history.ts), so a push's commits mentioning one issue
 * write at most this many notes on it.
 */
export const CROSS_REFERENCES_PER_EVENT = 10;
