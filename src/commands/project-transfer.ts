import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { invalid } from '../domain/errors.js';
import { projects } from '../domain/projects/aggregate.js';
import { projectNameClaim, projectPathClaim } from '../domain/projects/claims.js';
import { lockNamespaceRow } from '../projections/groups/facts.js';
import type { NamespaceRow } from '../projections/groups/tables.js';
import type { ProjectRow } from '../projections/projects/tables.js';
import type { Writer } from './kernel/context.js';
import { run } from './kernel/run.js';
import { toProjectNamespace } from './projects.js';

/**
 * PUT /projects/:id/transfer (GitLab 12.10's Projects::TransferService): the project moves to
 * another namespace — one ProjectTransferred on its stream, whose claims move its name and
 * path, and from which the projects projection moves its full path (so its web and
 * repository URLs) and the authorizations projection recomputes who reaches it. The
 * caller is authorized by the route (change_namespace on the project, create_projects on
 * the namespace).
 */
export async function transferProject(w: Writer, project: ProjectRow, namespace: NamespaceRow) {
  const command = async (trx: Db) => {
    // GitLab: a project of the new namespace with the same path or name refuses the move.
    const { rows } = await sql<{ n: number }>`select count(*)::integer as n from claims where (kind, key) in
      ((${'project_name'}, ${projectNameClaim(namespace.id, project.name).key}), (${'project_path'}, ${projectPathClaim(namespace.id, project.path).key}))`.execute(trx);
    const { rows: tagged } = await sql`select 1 from container_repository_tags where project_id = ${project.id} limit 1`.execute(trx);
    // The namespace as the transaction finds it, locked against its removal or a move until the commit.
    const current = await lockNamespaceRow(trx, namespace.id, 'share');
    if (!current || current.pending_delete) throw invalid({ new_namespace: ['Please select a new namespace for your project.'] });
    return { type: 'TransferProject' as const, namespace: toProjectNamespace(current), taken: rows[0]!.n > 0, registryTags: tagged.length > 0 };
  };
  return run(w, projects, project.id, command);
}
