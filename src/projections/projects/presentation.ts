import type { Db } from '../../database.js';
import type { Viewer } from '../../domain/access.js';
import { ACCESS } from '../../domain/access.js';
import { accessLevelsOn, today } from '../access.js';
import type { NamespaceRow } from '../namespaces.js';
import type { ProjectRow } from '../projects.js';
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
  /** The viewer's effective access level per project (GitLab: max_member_access). */
  readonly roles: ReadonlyMap<number, number | null>;
}

export async function projectPresentationData(db: Db, viewer: Viewer | null, rows: readonly ProjectRow[]): Promise<ProjectPresentationData> {
  const projectIds = rows.map((r) => r.id);
  const namespaceIds = [...new Set(rows.map((r) => r.namespace_id))];
  const [namespaces, shares] = await Promise.all([
    namespaceIds.length === 0 ? [] : db.selectFrom('namespaces').selectAll().where('id', 'in', namespaceIds).execute(),
    projectIds.length === 0
      ? []
      : db
          .selectFrom('project_group_links as l')
          .innerJoin('namespaces as g', 'g.id', 'l.group_id')
          .select(['l.project_id', 'l.group_id', 'g.name as group_name', 'g.full_path as group_full_path', 'l.group_access', 'l.expires_at', 'g.traversal_ids'])
          .where('l.project_id', 'in', projectIds)
          .orderBy('l.project_id')
          .orderBy('l.created_at')
          .orderBy('l.group_id')
          .execute(),
  ]);
  const ownerIds = [...new Set(namespaces.filter((n) => n.kind === 'user' && n.owner_id !== null).map((n) => n.owner_id!))];
  const owners = ownerIds.length === 0 ? [] : await db.selectFrom('users').selectAll().where('id', 'in', ownerIds).execute();
  const ownerById = new Map(owners.map((u) => [u.id, u]));

  const groupIds = [...new Set([...rows.flatMap((r) => r.traversal_ids), ...shares.flatMap((s) => s.traversal_ids)])];
  const [projectMembers, groupMembers] = viewer
    ? await Promise.all([accessLevelsOn(db, viewer.id, 'Project', projectIds), accessLevelsOn(db, viewer.id, 'Namespace', groupIds)])
    : [new Map<number, number>(), new Map<number, number>()];

  const namespaceById = new Map(namespaces.map((n) => [n.id, n]));
  const sharesByProject = new Map<number, SharedGroupRow[]>();
  for (const { traversal_ids: _t, ...share } of shares) {
    const list = sharesByProject.get(share.project_id) ?? [];
    list.push(share);
    sharesByProject.set(share.project_id, list);
  }
  const roles = new Map<number, number | null>();
  for (const row of rows) {
    if (!viewer) {
      roles.set(row.id, null);
      continue;
    }
    const levels: number[] = [];
    const own = projectMembers.get(row.id);
    if (own !== undefined) levels.push(own);
    for (const id of row.traversal_ids) {
      const level = groupMembers.get(id);
      if (level !== undefined) levels.push(level);
    }
    for (const share of shares.filter((s) => s.project_id === row.id && (s.expires_at === null || s.expires_at >= today()))) {
      for (const id of share.traversal_ids) {
        const level = groupMembers.get(id);
        if (level !== undefined) levels.push(Math.min(level, share.group_access));
      }
    }
    const ns = namespaceById.get(row.namespace_id);
    if (ns?.kind === 'user' && ns.owner_id === viewer.id) levels.push(ACCESS.MAINTAINER);
    roles.set(row.id, levels.length > 0 ? Math.max(...levels) : null);
  }
  const ownersByNamespace = new Map<number, UserRow>();
  for (const ns of namespaces) {
    const owner = ns.owner_id === null ? undefined : ownerById.get(ns.owner_id);
    if (ns.kind === 'user' && owner) ownersByNamespace.set(ns.id, owner);
  }
  return { namespaces: namespaceById, owners: ownersByNamespace, shares: sharesByProject, projectMembers, groupMembers, roles };
}
