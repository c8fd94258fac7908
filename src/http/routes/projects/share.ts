import { Hono } from 'hono';
import { shareProjectWithGroup } from '../../../commands/projects.js';
import { run } from '../../../commands/kernel/run.js';
import { DomainError, notFound, serviceError, serviceNotFound } from '../../../domain/errors.js';
import { projects } from '../../../domain/projects/aggregate.js';
import { toProjectGroupLink } from '../../entities/projects.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { declared, optional, pathId, required, t, type Shape } from '../../kernel/params.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { userGroup, userProject } from '../../kernel/scope.js';

/** GitLab 12's Gitlab::Access.values: guest to maintainer, not owner. */
const GROUP_ACCESS = [10, 20, 30, 40] as const;

const shareShape = {
  group_id: required(t.integer()),
  group_access: required(t.integerValues(GROUP_ACCESS)),
  expires_at: optional(t.date()),
} satisfies Shape;

/** `requires :group_id, type: Integer`. */
const ON_GROUP = { pathIds: ['group_id'] } as const;

/**
 * Sharing a project with a group (GitLab 12.10 lib/api/projects.rb `:id/share`): maintainers
 * and admins (`authorize! :admin_project`) link a group whose members then get access to the
 * project, capped by the link's group_access.
 */
export const projectShareRoutes = new Hono<AppEnv>()
  .post('/projects/:id/share', documented({ summary: 'Share the project with a group', params: shareShape, responses: { 201: 'ProjectGroupLink', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = await declared(c, shareShape);
    const project = await userProject(c, w.auth, 'admin_project');
    const { db } = appContext(c);
    // GitLab: Project#allowed_to_share_with_group? (the namespace's share_with_group_lock), before the group is looked at.
    const namespace = await db.selectFrom('namespaces').select('share_with_group_lock').where('id', '=', project.row.namespace_id).executeTakeFirst();
    if (namespace?.share_with_group_lock) throw serviceError('The project sharing with group is disabled');
    // GitLab: Projects::GroupLinks::CreateService answers error('Not Found', 404) for a group the caller may not read.
    const group = await userGroup(c, w.auth, undefined, String(p.group_id)).catch((error: unknown) => {
      throw error instanceof DomainError && error.code === 'not_found' ? serviceNotFound('Not Found') : error;
    });
    const share = { groupId: group.row.id, groupAccess: p.group_access, expiresAt: p.expires_at ?? null };
    const id = await shareProjectWithGroup(w, project.row, share);
    return c.json(toProjectGroupLink({ id, project_id: project.row.id, group_id: share.groupId, group_access: share.groupAccess, expires_at: share.expiresAt }), 201);
  })

  .delete('/projects/:id/share/:group_id', documented({ summary: 'Remove a group share from the project', ...ON_GROUP, responses: { 204: null, ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    await declared(c, {}, ON_GROUP);
    const project = await userProject(c, w.auth, 'admin_project');
    const groupId = pathId(c, 'group_id');
    const { db } = appContext(c);
    const link =
      groupId === null
        ? undefined
        : await db.selectFrom('project_group_links').select('group_id').where('project_id', '=', project.row.id).where('group_id', '=', groupId).executeTakeFirst();
    if (!link) throw notFound('Group Link');
    const command = { type: 'UnshareProjectWithGroup', groupId: link.group_id, pathWithNamespace: project.row.path_with_namespace } as const;
    await run(w, projects, project.row.id, command);
    return c.body(null, 204);
  });
