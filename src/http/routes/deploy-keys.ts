import { Hono, type Context } from 'hono';
import { notFound, paramErrors, recordNotFound } from '../../domain/errors.js';
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
import { requireAdmin, requireUser, writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { paginate } from '../kernel/pagination.js';
import { atLeastOneOf, declaration, integerCheck, optional, pathId, params, rawParams, required, t } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { userProject } from '../kernel/scope.js';
import { deployKeys } from '../../domain/deploy-keys.js';
import { newId, run } from '../../commands/kernel/run.js';

/**
 * GitLab's API::DeployKeys (12.x): the instance's keys for administrators, and a project's
 * keys for those who may admin the project (`before { authorize_admin_project }`: 404 when
 * the project is hidden, 403 below maintainer), checked before the parameters.
 */
export const deployKeyRoutes = new Hono<AppEnv>();

/** `requires :key_id, type: Integer`: "key_id is invalid"; a number no key can have finds nothing. */
function keyIdOf(c: Context): number {
  const invalid = integerCheck(c, 'key_id');
  if (invalid) throw paramErrors([invalid]);
  return pathId(c, 'key_id') ?? 0;
}

/** The project `:id`, for a caller who may admin it. */
async function adminProject(c: Context) {
  const auth = await requireUser(c);
  const project = await userProject(c, auth, 'admin_project');
  return { auth, project };
}

const createParams = { key: required(t.string()), title: required(t.string()), can_push: optional(t.boolean()) };
const updateParams = { title: optional(t.string()), can_push: optional(t.boolean()) };

deployKeyRoutes
  .get('/deploy_keys', async (c) => {
    await requireAdmin(c);
    const { db } = appContext(c);
    const rows = await paginate(c, allDeployKeysQuery(db), (q) => q.orderBy('id'));
    return c.json(rows.map(toSshKey));
  })

  .get('/projects/:id/deploy_keys', async (c) => {
    const { project } = await adminProject(c);
    const { db } = appContext(c);
    const rows = await paginate(c, projectDeployKeysQuery(db, project.row.id), (q) => q.orderBy('dkp.created_at').orderBy('k.id'));
    return c.json(rows.map(toDeployKeysProject));
  })

  .get('/projects/:id/deploy_keys/:key_id', async (c) => {
    const { project } = await adminProject(c);
    const keyId = keyIdOf(c);
    const row = await projectDeployKeysQuery(appContext(c).db, project.row.id, { keyId }).executeTakeFirst();
    if (!row) throw recordNotFound('Deploy Key');
    return c.json(toDeployKeysProject(row));
  })

  .post('/projects/:id/deploy_keys', async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
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
        userId: auth.user.id,
        restrictions,
        fingerprintTaken: parsed ? await fingerprintTaken(trx, parsed.fingerprint) : false,
      }),
    );
    return respond(id);
  })

  .put('/projects/:id/deploy_keys/:key_id', async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const raw = await rawParams(c);
    const declared = declaration(raw);
    declared.check(integerCheck(c, 'key_id'));
    const p = declared.parse(updateParams);
    declared.check(atLeastOneOf(raw, ['title', 'can_push']));
    declared.done();
    const keyId = keyIdOf(c);
    const { db } = appContext(c);
    const projectId = project.row.id;
    if (!(await projectDeployKeysQuery(db, projectId, { keyId }).executeTakeFirst())) throw recordNotFound('Deploy Key');
    await run(w, deployKeys, keyId, { type: 'UpdateDeployKey', projectId, title: p.title, canPush: p.can_push });
    return c.json(toDeployKeysProject(await projectDeployKeysQuery(db, projectId, { keyId }).executeTakeFirstOrThrow()));
  })

  .delete('/projects/:id/deploy_keys/:key_id', async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const keyId = keyIdOf(c);
    const { db } = appContext(c);
    const projectId = project.row.id;
    const link = await projectDeployKeysQuery(db, projectId, { keyId }).executeTakeFirst();
    if (!link) throw notFound('Deploy Key');
    checkUnmodifiedSince(c, link.link_updated_at);
    await run(w, deployKeys, keyId, async (trx) => ({ type: 'UnlinkDeployKey', projectId, liveProjectIds: await linkedProjectIds(trx, keyId) }));
    return c.body(null, 204);
  })

  .post('/projects/:id/deploy_keys/:key_id/enable', async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const keyId = keyIdOf(c);
    const { db } = appContext(c);
    // Projects::EnableDeployKeyService: administrators enable any key, others a key of a project they are a member of.
    const found = auth.user.is_admin
      ? (await findDeployKey(db, keyId))?.id
      : project.viewer
        ? await accessibleDeployKey(db, project.viewer, { id: keyId })
        : undefined;
    if (found === undefined) throw notFound('Deploy Key');
    await run(w, deployKeys, found, { type: 'LinkDeployKey', projectId: project.row.id, canPush: false });
    const key = await findDeployKey(db, found);
    if (!key) throw notFound('Deploy Key');
    return c.json(toSshKey(key), 201);
  });
