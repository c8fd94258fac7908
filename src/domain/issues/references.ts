/**
 * Issue references in a text (GitLab's Issue.reference_pattern and link_reference_pattern)
 * and the ones GitLab's ClosingIssueExtractor reads as closing, with GitLab 12's default
 * `issue_closing_pattern` (`Closes #1`, `Fixes group/project#2`, `Resolves: #3 and #4`,
 * `Implements https://host/group/project/-/issues/5`).
 */

/** `path` null: the text's own project; a path without a slash: a project of the same namespace. */
export interface IssueReference {
  readonly path: string | null;
  readonly iid: number;
}

const PATH = String.raw`[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*(?:/[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*)*`;
const SHORT = String.raw`(?<![\w/#&])(?:(${PATH}))?#(\d+)(?!\w)`;
const LINK = String.raw`https?://[^\s/]+/(${PATH})/(?:-/)?issues/(\d+)(?![\w/])`;
const ISSUE_REF = String.raw`(?:https?://[^\s/]+/${PATH}/(?:-/)?issues/\d+|(?:${PATH})?#\d+)`;

/** gitlab.yml's default issue_closing_pattern, `%{issue_ref}` replaced as ClosingIssueExtractor does. */
const CLOSING = new RegExp(
  String.raw`\b((?:[Cc]los(?:e[sd]?|ing)|\b[Ff]ix(?:e[sd]|ing)?|\b[Rr]esolv(?:e[sd]?|ing)|\b[Ii]mplement(?:s|ed|ing)?)(:?) +(?:(?:issues? +)?${ISSUE_REF}(?:(?: *,? +and +| *,? *)?)|([A-Z][A-Z0-9_]+-\d+))+)`,
  'g',
);

/** Every issue reference of a text, once each, in order. */
export function issueReferences(text: string | null | undefined): IssueReference[] {
  if (!text) return [];
  const found: { at: number; ref: IssueReference }[] = [];
  for (const m of text.matchAll(new RegExp(LINK, 'g'))) found.push({ at: m.index, ref: { path: m[1]!, iid: Number(m[2]) } });
  for (const m of text.matchAll(new RegExp(SHORT, 'g'))) found.push({ at: m.index, ref: { path: m[1] ?? null, iid: Number(m[2]) } });
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at)
    .map((f) => f.ref)
    .filter((ref) => Number.isSafeInteger(ref.iid) && !seen.has(`${ref.path}#${ref.iid}`) && seen.add(`${ref.path}#${ref.iid}`));
}

/** The references a text closes: those inside a closing phrase. */
export function closingIssueReferences(text: string | null | undefined): IssueReference[] {
  if (!text) return [];
  return issueReferences([...text.matchAll(CLOSING)].map((m) => m[0]).join('\n'));
}

/**
 * The project path a reference names, lowercased, seen from a project (its path with
 * namespace): null for the project itself, a path without a slash within the same namespace.
 */
export function referencedPath(ref: IssueReference, fromPath: string): string | null {
  if (ref.path === null) return null;
  return (ref.path.includes('/') ? ref.path : `${fromPath.slice(0, fromPath.lastIndexOf('/'))}/${ref.path}`).toLowerCase();
}

/** Whether references written in one project name one issue (its project's id and path, its iid). */
export function referencesIssue(refs: readonly IssueReference[], from: { id: number; path: string }, issue: { projectId: number; path: string; iid: number }): boolean {
  return refs.some((ref) => {
    if (ref.iid !== issue.iid) return false;
    const path = referencedPath(ref, from.path);
    return path === null ? from.id === issue.projectId : path === issue.path.toLowerCase();
  });
}

/**
 * MergeRequest#closes_issues (GitLab 12): the issues its title and description close, for a
 * merge request into its project's default branch only (none for another target).
 */
export function mergeRequestClosingReferences(mr: { title: string; description: string | null; target_branch: string }, defaultBranch: string | null): IssueReference[] {
  if (mr.target_branch !== defaultBranch) return [];
  return closingIssueReferences([mr.title, mr.description ?? ''].join('\n'));
}
