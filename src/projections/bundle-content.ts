import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import type { BundleContentSource, BundleGitObject, BundleUpload } from '../eventstore/export.js';
import type { BundleContentSink } from '../eventstore/import.js';
import { indexCommits } from './repository/commit-graph.js';
import { repositoryObjectsCheck } from './repository/verify.js';

/**
 * What a bundle (`forgelog events export --bundle`, src/eventstore/export.ts) carries beside
 * the log, read from and written to the tables that hold it: uploads (avatars, by SHA-256)
 * and the repositories' git objects (by SHA-1). Both are content-addressed, so the import
 * hashes each again before it is stored (src/eventstore/import.ts). The commit graph index
 * (`repository_commits`) is not carried: it is derived from the commits, and recomputed once
 * a project's objects are all stored.
 */
export const bundleContent: BundleContentSource & BundleContentSink = {
  async *uploads(db: Db): AsyncGenerator<BundleUpload> {
    let after = '';
    for (;;) {
      const rows = await db.selectFrom('uploads').select(['sha256', 'content']).where('sha256', '>', after).orderBy('sha256').limit(100).execute();
      for (const row of rows) yield { sha256: row.sha256, content: Buffer.from(row.content) };
      const last = rows.at(-1);
      if (!last) return;
      after = last.sha256;
    }
  },

  async *gitObjects(db: Db): AsyncGenerator<BundleGitObject> {
    let after = { projectId: -1, sha: '' };
    for (;;) {
      const rows = await db
        .selectFrom('repository_objects')
        .select(['project_id', 'sha', 'type', 'content'])
        .where(sql<boolean>`(project_id, sha) > (${after.projectId}, ${after.sha})`)
        .orderBy('project_id')
        .orderBy('sha')
        .limit(200)
        .execute();
      for (const row of rows) yield { project_id: row.project_id, sha: row.sha, type: row.type, content: Buffer.from(row.content) };
      const last = rows.at(-1);
      if (!last) return;
      after = { projectId: last.project_id, sha: last.sha };
    }
  },

  async storeUploads(trx, uploads) {
    await trx
      .insertInto('uploads')
      .values(uploads.map((u) => ({ sha256: u.sha256, size: u.content.length, content: u.content })))
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
  },

  async storeGitObjects(trx, objects) {
    await trx
      .insertInto('repository_objects')
      .values(objects.map((o) => ({ project_id: o.project_id, sha: o.sha, type: o.type as 'blob', size: o.content.length, content: o.content })))
      .onConflict((oc) => oc.columns(['project_id', 'sha']).doNothing())
      .execute();
  },

  check: (trx) => repositoryObjectsCheck(trx),

  /** Each project's commit graph, from all of its commits at once (a commit's row needs its parents'). */
  async finish(trx) {
    const projects = await trx.selectFrom('repository_objects').select('project_id').distinct().where('type', '=', 'commit').orderBy('project_id').execute();
    for (const { project_id: projectId } of projects) {
      const commits = await trx.selectFrom('repository_objects').select(['sha', 'content']).where('project_id', '=', projectId).where('type', '=', 'commit').execute();
      await indexCommits(trx, projectId, commits);
    }
  },
};
