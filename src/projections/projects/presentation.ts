import { sql } from 'kysely';
import { readTogether } from '../../database/read-together.js';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { projectAccessLevels, unexpired } from '../access.js';
import type { NamespaceRow } from '../groups/tables.js';
import type { ProjectRow } from './tables.js';
import type { UserRow } from '../users.js';

// ───────────────────────────── Presentation data ─────────────────────────────

/** Entities::SharedGroup rows of a project. */
export interface SharedGroupRow {
  readonly project_id: number;
  readonly group_id: number;
  readonly group_name: string;
  readonly group_full_path: string;
  readonly group_access: number;
  readonly expires_at: string | null;
}

/** What serialising a page of projects needs beyond the rows, loaded in a few queries. */
export interface ProjectPresentationData {
  readonly namespaces: ReadonlyMap<number, NamespaceRow>;
  /** Owners of personal namespaces, by namespace id. */
  readonly owners: ReadonlyMap<number, UserRow>;
  readonly shares: ReadonlyMap<number, readonly SharedGroupRow[]>;
  /** The viewer's direct project memberships (project id → access level). */
  readonly projectMembers: ReadonlyMap<number, number>;
  /** The viewer's direct group memberships (group id → access level). */
  readonly groupMembers: ReadonlyMap<number, number>;
  /** The viewer's access level per project (the one model: src/projections/access.ts). */
  readonly roles: ReadonlyMap<number, number | null>;
}

/**
 * `known`: namespace rows the caller already holds (the group whose projects are listed): not
 * read again, and without a personal one among the namespaces, no owner is looked up.
 */
export async function projectPresentationData(db: Db, viewer: Viewer | null, rows: readonly ProjectRow[], known: readonly NamespaceRow[] = []): Promise<ProjectPresentationData> {
  const projectIds = rows.map((r) => r.id);
  const namespaceIds = [...new Set(rows.map((r) => r.namespace_id))];
  const groupIds = [...new Set(rows.flatMap((r) => r.traversal_ids))];
  if (projectIds.length === 0) return { namespaces: new Map(), owners: new Map(), shares: new Map(), projectMembers: new Map(), groupMembers: new Map(), roles: new Map() };
  const knownById = new Map(known.filter((n) => namespaceIds.includes(n.id)).map((n) => [n.id, n]));
  const unknownIds = namespaceIds.filter((id) => !knownById.has(id));
  const ownersNeeded = unknownIds.length > 0 || [...knownById.values()].some((n) => n.kind === 'user');
  // In one round trip (src/database/read-together.ts).
  const [read, shares, levels, owners] = await readTogether(db, [
    unknownIds.length > 0 ? db.selectFrom('namespaces').selectAll().where('id', 'in', unknownIds).compile() : null,
    db
      .selectFrom('project_group_links as l')
      .innerJoin('namespaces as g', 'g.id', 'l.group_id')
      .select(['l.project_id', 'l.group_id', 'g.name as group_name', 'g.full_path as group_full_path', 'l.group_access', 'l.expires_at'])
      .where('l.project_id', 'in', projectIds)
      .orderBy('l.project_id')
      .orderBy('l.created_at')
      .orderBy('l.group_id')
      .compile(),
    viewerLevels(viewer, projectIds, groupIds).compile(db),
    // The owners of the personal namespaces among them.
    ownersNeeded
      ? db
          .selectFrom('users')
          .selectAll()
          .where('id', 'in', db.selectFrom('namespaces').select('owner_id').where('id', 'in', namespaceIds).where('kind', '=', 'user'))
          .compile()
      : null,
  ]);
  const namespaces = [...knownById.values(), ...read];
  const { projectMembers, groupMembers, roles } = byKind(levels);
  const ownerById = new Map(owners.map((u) => [u.id, u]));
  const namespaceById = new Map(namespaces.map((n) => [n.id, n]));
  const sharesByProject = new Map<number, SharedGroupRow[]>();
  for (const share of shares) {
    const list = sharesByProject.get(share.project_id) ?? [];
    list.push(share);
    sharesByProject.set(share.project_id, list);
  }
  const ownersByNamespace = new Map<number, UserRow>();
  for (const ns of namespaces) {
    const owner = ns.owner_id === null ? undefined : ownerById.get(ns.owner_id);
    if (ns.kind === 'user' && owner) ownersByNamespace.set(ns.id, owner);
  }
  return { namespaces: namespaceById, owners: ownersByNamespace, shares: sharesByProject, projectMembers, groupMembers, roles };
}

/**
 * In one query: the viewer's direct project and group memberships (the entity's
 * `permissions`: what GitLab shows, not what it decides on) and the viewer's access level on
 * each project (what it decides on: the one model). Anonymous: none.
 */
function viewerLevels(viewer: Viewer | null, projectIds: readonly number[], groupIds: readonly number[]) {
  if (!viewer) return sql<LevelRow>`select null::text as kind, null::integer as id, null::integer as access_level where false`;
  return sql<LevelRow>`
    select m.source_type as kind, m.source_id as id, m.access_level from members m
     where m.user_id = ${viewer.id} and ${unexpired(viewer.today, 'm')}
       and ((m.source_type = 'Project' and m.source_id = any(${[...projectIds]}::integer[]))
         or (m.source_type = 'Namespace' and m.source_id = any(${[...groupIds]}::integer[])))
    union all
    select 'level', l.project_id, l.access_level from (${projectAccessLevels(viewer, projectIds)}) l`;
}

type LevelRow = { kind: 'Project' | 'Namespace' | 'level'; id: number; access_level: number | null };

function byKind(rows: readonly LevelRow[]) {
  const projectMembers = new Map<number, number>();
  const groupMembers = new Map<number, number>();
  const roles = new Map<number, number | null>();
  for (const row of rows) {
    if (row.kind === 'Project') projectMembers.set(row.id, row.access_level!);
    else if (row.kind === 'Namespace') groupMembers.set(row.id, row.access_level!);
    else roles.set(row.id, row.access_level);
  }
  return { projectMembers, groupMembers, roles };
}
