import { Hono } from 'hono';
import { transferProject } from '../../../commands/project-transfer.js';
import { invalid, notFound } from '../../../domain/errors.js';
import { viewerOf } from '../../../projections/access.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { failedTo, rendersInvalid } from '../../kernel/errors.js';
import { declared, required, t, type Shape } from '../../kernel/params.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { userGroup, userProject } from '../../kernel/scope.js';
import { findNamespace, mayCreateProjectsIn, presentProject } from './forks.js';

/**
 * PUT /projects/:id/transfer (GitLab 12.10 lib/api/projects.rb, Projects::TransferService):
 * owners move a project to a namespace they may create projects in. A refusal is
 * `render_api_error!("Failed to transfer project #{errors.messages}", 400)`.
 */
const transferShape = { namespace: required(t.string()) } satisfies Shape;

export const projectTransferRoutes = new Hono<AppEnv>().put('/projects/:id/transfer', documented({ summary: 'Transfer a project to a new namespace', params: transferShape, responses: { 200: 'Project', ...REFUSED } }), rendersInvalid(failedTo('transfer project')), async (c) => {
  const w = await requireWriter(c);
  const p = await declared(c, transferShape);
  const project = await userProject(c, w.auth, 'change_namespace');
  const { db } = appContext(c);
  const viewer = viewerOf(w.auth.user, today(c))!;
  // GitLab: find_namespace!, 404 "Namespace Not Found" unless the caller may read it (a group: read_group; a personal namespace: its owner, administrators).
  const found = await findNamespace(db, p.namespace);
  if (!found) throw notFound('Namespace');
  if (found.kind === 'group') await userGroup(c, w.auth, undefined, String(found.id)).catch(() => Promise.reject(notFound('Namespace')));
  else if (found.owner_id !== viewer.id && !viewer.isAdmin) throw notFound('Namespace');
  // Projects::TransferService#allowed_transfer?: a namespace the caller may create projects in (the same one is the decider's refusal).
  if (found.id !== project.row.namespace_id && !(await mayCreateProjectsIn(db, viewer, w.auth.user, found))) {
    throw invalid({ new_namespace: ['Transfer failed, please contact an admin.'] });
  }
  await transferProject(w, project.row, found);
  return c.json(await presentProject(c, w.auth, project.row.id));
});
