import { issueLinks, type LinkedIssue } from '../domain/issue-links.js';
import { create, run } from './kernel/run.js';
import type { Writer } from './kernel/context.js';

/** IssueLinks::CreateService for one target: the new link's id. */
export async function createIssueLink(w: Writer, source: LinkedIssue, target: LinkedIssue): Promise<number> {
  return (await create(w, issueLinks, () => ({ type: 'CreateIssueLink', source, target }))).id;
}

/** IssueLinks::DestroyService. */
export const deleteIssueLink = (w: Writer, id: number) => run(w, issueLinks, id, { type: 'DeleteIssueLink' });
