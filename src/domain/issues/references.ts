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
