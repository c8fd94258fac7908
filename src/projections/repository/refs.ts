import type { Db } from '../../database/database.js';
import type { AdvertisedRef } from '../../domain/repository/upload-pack.js';
import { listBranches } from './queries.js';
import { listTags } from './tags.js';

/**
 * Every ref of a project as git lists them (the dumb and the smart protocols' advertisements):
 * `refs/heads/<branch>` and `refs/tags/<tag>` by their names' bytes, an annotated tag with the
 * commit it names (`peeled`).
 */
export async function listRefs(db: Db, projectId: number): Promise<AdvertisedRef[]> {
  const [branches, tags] = await Promise.all([listBranches(db, projectId), listTags(db, projectId)]);
  return [
    ...branches.map((b) => ({ name: `refs/heads/${b.name}`, sha: b.sha })),
    ...tags.map((t) => ({ name: `refs/tags/${t.name}`, sha: t.target, ...(t.target === t.commit_sha ? {} : { peeled: t.commit_sha }) })),
  ].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
}
