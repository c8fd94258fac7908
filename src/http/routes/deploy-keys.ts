import { Hono, type Context } from 'hono';
import { notFound, recordNotFound } from '../../domain/errors.js';
import { parsePublicKey, sanitizeKey } from '../../domain/ssh-keys.js';
import {
  accessibleDeployKey,
  allDeployKeysQuery,
  findDeployKey,
  fingerprintTaken,
  linkedProjectIds,
  projectDeployKeysQuery,
} from '../../projections/deploy-keys/queries.js';
import { keyRestrictions } from '../../projections/application-settings/queries.js';
import { toDeployKeysProject, toSshKey } from '../entities/deploy-keys.js';
import { requireAdmin, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { atLeastOneOf, declared, optional, params, required, t } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { pathRow, userProject } from '../kernel/scope.js';
import { deployKeys } from '../../domain/deploy-keys.js';
import { newId, run } from '../../commands/kernel/run.js';

/**
 * GitLab's API::DeployKeys (12.x): the instance's keys for administrators, and a project's
 * keys for those who may admin the project (`before { authorize_admin_project }`: 404 when
 * the project is hidden, 403 below maintainer), checked before the parameters.
 */
export const deployKeyRoutes = new Hono<AppEnv>();

/** `requires :key_id, type: Integer`: "key_id is invalid". */
const ON_KEY = { pathIds: ['key_id'] } as const;

/** `user_project.deploy_keys_projects.find_by!(deploy_key_id: params[:key_id])`: the project's link to the key, or the route's 404. */
const linkOf = (c: Context, projectId: number, notFound: () => Error) =>
  pathRow(c, 'key_id', (db, keyId) => projectDeployKeysQuery(db, projectId, { keyId }).executeTakeFirst(), notFound);

/** The project `:id`, for a caller who may admin it, and the request's writer. */
async function adminProject(c: Context) {
  const w = await requireWriter(c);
  const project = await userProject(c, w.auth, 'admin_project');
  return { w, project };
}

const createParams = { key: required(t.string()), title: required(t.string()), can_push: optional(t.boolean()) };
const updateParams = { title: optional(t.string()), can_push: optional(t.boolean()) };

deployKeyRoutes
  .get('/deploy_keys', documented({ summary: 'List all deploy keys', auth: 'admin', responses: { 200: 'SSHKey[]', 403: 'Error' } }), async (c) => {
    await requireAdmin(c);
    const { db } = appContext(c);
    const rows = await paginate(c, allDeployKeysQuery(db), (q) => q.orderBy('id'));
    return c.json(rows.map(toSshKey));
  })

  .get('/projects/:id/deploy_keys', documented({ summary: "List a project's deploy keys", responses: { 200: 'DeployKeysProject[]', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    const { db } = appContext(c);
    const rows = await paginate(c, projectDeployKeysQuery(db, project.row.id), (q) => q.orderBy('dkp.created_at').orderBy('k.id'));
    return c.json(rows.map(toDeployKeysProject));
  })

  .get('/projects/:id/deploy_keys/:key_id', documented({ summary: 'Get a deploy key of a project', ...ON_KEY, responses: { 200: 'DeployKeysProject', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    await declared(c, {}, ON_KEY);
    return c.json(toDeployKeysProject(await linkOf(c, project.row.id, () => recordNotFound('Deploy Key'))));
  })

  .post('/projects/:id/deploy_keys', documented({ summary: 'Add a deploy key to a project', params: createParams, responses: { 201: 'DeployKeysProject', ...REFUSED } }), async (c) => {
    const { w, project } = await adminProject(c);
    const p = await params(c, createParams);
    const { db } = appContext(c);
    const projectId = project.row.id;
    const key = p.key.trim();
    const canPush = p.can_push ?? false;
    const respond = async (keyId: number) => c.json(toDeployKeysProject(await projectDeployKeysQuery(db, projectId, { keyId }).executeTakeFirstOrThrow()), 201);

    // GitLab: the same key text already in this project is answered as it is.
    const existing = await projectDeployKeysQuery(db, projectId, { key }).executeTakeFirst();
    if (existing) return c.json(toDeployKeysProject(existing), 201);

    // A key of a project the caller is a member of is enabled here too.
    const accessible = project.viewer ? await accessibleDeployKey(db, project.viewer, { key }) : undefined;
    if (accessible !== undefined) {
      await run(w, deployKeys, accessible, { type: 'LinkDeployKey', projectId, canPush });
      return respond(accessible);
    }

    const id = await newId(w, deployKeys);
    const parsed = parsePublicKey(sanitizeKey(key));
    const restrictions = await keyRestrictions(db);
    await run(
      w,
      deployKeys,
      id,
      async (trx) => ({
        type: 'CreateDeployKey',
        projectId,
        title: p.title,
        key,
        canPush,
        userId: w.auth.user.id,
        restrictions,
        fingerprintTaken: parsed ? await fingerprintTaken(trx, parsed.fingerprint) : false,
      }),
    );
    return respond(id);
  })

  .put('/projects/:id/deploy_keys/:key_id', documented({ summary: "Update a project's deploy key", params: updateParams, ...ON_KEY, responses: { 200: 'DeployKeysProject', ...REFUSED } }), async (c) => {
    const { w, project } = await adminProject(c);
    const p = await declared(c, updateParams, { ...ON_KEY, checks: [(raw) => atLeastOneOf(raw, ['title', 'can_push'])] });
    const projectId = project.row.id;
    const { id: keyId } = await linkOf(c, projectId, () => recordNotFound('Deploy Key'));
    await run(w, deployKeys, keyId, { type: 'UpdateDeployKey', projectId, title: p.title, canPush: p.can_push });
    return c.json(toDeployKeysProject(await projectDeployKeysQuery(appContext(c).db, projectId, { keyId }).executeTakeFirstOrThrow()));
  })

  .delete('/projects/:id/deploy_keys/:key_id', documented({ summary: 'Remove a deploy key from a project', ...ON_KEY, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const { w, project } = await adminProject(c);
    await declared(c, {}, ON_KEY);
    const projectId = project.row.id;
    const link = await linkOf(c, projectId, () => notFound('Deploy Key'));
    checkUnmodifiedSince(c, link.link_updated_at);
    await run(w, deployKeys, link.id, async (trx) => ({ type: 'UnlinkDeployKey', projectId, liveProjectIds: await linkedProjectIds(trx, link.id) }));
    return c.body(null, 204);
  })

  .post('/projects/:id/deploy_keys/:key_id/enable', documented({ summary: 'Enable a deploy key for a project', ...ON_KEY, responses: { 201: 'SSHKey', ...REFUSED } }), async (c) => {
    const { w, project } = await adminProject(c);
    await declared(c, {}, ON_KEY);
    // Projects::EnableDeployKeyService: administrators enable any key, others a key of a project they are a member of.
    const found = await pathRow(
      c,
      'key_id',
      async (db, keyId) => (w.auth.user.is_admin ? (await findDeployKey(db, keyId))?.id : project.viewer ? accessibleDeployKey(db, project.viewer, { id: keyId }) : undefined),
      () => notFound('Deploy Key'),
    );
    await run(w, deployKeys, found, { type: 'LinkDeployKey', projectId: project.row.id, canPush: false });
    const key = await findDeployKey(appContext(c).db, found);
    if (!key) throw notFound('Deploy Key');
    return c.json(toSshKey(key), 201);
  });
