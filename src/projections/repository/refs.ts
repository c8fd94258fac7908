import type { Db } from '../../database/database.js';
import type { AdvertisedRef } from '../../domain/repository/upload-pack.js';
import { listBranches } from './queries.js';
import { listTags } from './tags.js';

/**
 * Every ref of a project as git lists them (the dumb and the smart protocols' advertisements):
 * `refs/heads/<branch>` and `refs/tags/<tag>` by their names' bytes, an annotated tag with the
 * commit it names (`peeled`). With `mergeRequests` (what fetch sees), the merge requests' refs
 * too (mergeRequestRefs).
 */
export async function listRefs(db: Db, projectId: number, options: { mergeRequests?: boolean } = {}): Promise<AdvertisedRef[]> {
  const [branches, tags, mergeRequests] = await Promise.all([listBranches(db, projectId), listTags(db, projectId), options.mergeRequests ? mergeRequestRefs(db, projectId) : []]);
  return [
    ...branches.map((b) => ({ name: `refs/heads/${b.name}`, sha: b.sha })),
    ...tags.map((t) => ({ name: `refs/tags/${t.name}`, sha: t.target, ...(t.target === t.commit_sha ? {} : { peeled: t.commit_sha }) })),
    ...mergeRequests,
  ].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
}

/**
 * The refs GitLab 12.10 keeps for the project's merge requests, read from the merge requests
 * projection, not from any ref store: `refs/merge-requests/<iid>/head` at every merge request's
 * diff head (MergeRequest#fetch_ref!, written for each new version and kept whatever the state;
 * a fork's head is fetched into this repository: src/commands/repository-fetch.ts) and
 * `refs/merge-requests/<iid>/merge` at the merge ref MergeToRefService last wrote (GET
 * …/merge_ref). Read-only: a push to them is refused (src/domain/repository/receive.ts).
 */
export async function mergeRequestRefs(db: Db, projectId: number): Promise<AdvertisedRef[]> {
  const rows = await db.selectFrom('merge_requests').select(['iid', 'head_sha', 'merge_ref_sha']).where('project_id', '=', projectId).execute();
  return rows.flatMap((row) => [
    { name: `refs/merge-requests/${row.iid}/head`, sha: row.head_sha },
    ...(row.merge_ref_sha === null ? [] : [{ name: `refs/merge-requests/${row.iid}/merge`, sha: row.merge_ref_sha }]),
  ]);
}
