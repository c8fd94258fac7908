import { Hono, type Context } from 'hono';
import { conflict, DomainError, recordNotFound, refused } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { ACCESS_KINDS, alreadyProtected, PROTECTED_REF_LEVELS, type AccessInput, type AccessKind, type RuleInput, protectedBranches } from '../../domain/protected-branches.js';
import { findProtectedBranch, protectedBranchesQuery, ruleFacts, rulesOf } from '../../projections/protected-branches/queries.js';
import type { ProtectedBranchRow } from '../../projections/protected-branches/tables.js';
import { toProtectedBranch } from '../entities/protected-branches.js';
import { authenticate, writerFor } from '../kernel/auth.js';
import { appContext, today, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { fullMessages, rendersInvalid, routeNotFound } from '../kernel/errors.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, optional, params, parseParams, rawParams, required, t, withDefault, type RawParams } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { userProject } from '../kernel/scope.js';
import { newId, run } from '../../commands/kernel/run.js';

/**
 * GET/POST/PATCH/DELETE /projects/:id/protected_branches… (GitLab's API::ProtectedBranches
 * and EE::API::ProtectedBranches). Every endpoint is `before { authorize_admin_project }`:
 * maintainers and administrators, reads included; parameters are validated after that.
 */

const levels = () => t.integerValues(PROTECTED_REF_LEVELS);

/** `allowed_to_<kind>` in the order EE declares them. */
const DECLARED_KINDS: readonly AccessKind[] = ['push', 'merge', 'unprotect'];

const listParams = { search: optional(t.string()) };

/** CE's declaration: the name and the role of push and merge. */
const createParams = {
  // A name past what git keeps cannot be a branch, nor stand in the (project, name) claim's index.
  name: required(t.ref()),
  push_access_level: optional(levels()),
  merge_access_level: optional(levels()),
};

/** EE's (optional_params_ee): the unprotect role, the rules of each kind (`allowedRules`), code owners' approval. */
const unprotectParams = { unprotect_access_level: optional(levels()) };
const codeOwnerParams = { code_owner_approval_required: withDefault(t.boolean(), false) };

const ruleParams = {
  access_level: optional(levels()),
  user_id: optional(t.integer()),
  group_id: optional(t.integer()),
};

/**
 * `allowed_to_<kind>`: an Array of Hashes, each element's keys validated under the array's
 * name (`allowed_to_push[user_id] is invalid`). Anything but an array of hashes is invalid.
 */
function allowedRules(raw: RawParams, kind: AccessKind, check: (message: string) => void): RuleInput[] {
  const name = `allowed_to_${kind}`;
  const value = raw[name];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))) {
    check(`${name} is invalid`);
    return [];
  }
  const rules: RuleInput[] = [];
  for (const element of value as RawParams[]) {
    try {
      rules.push(parseParams(ruleParams, element));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_params') throw error;
      for (const message of error.params ?? []) check(message.replace(/^(\S+)/, `${name}[$1]`));
    }
  }
  return rules;
}

/** The project (`authorize_admin_project`: 404 unseen, 403 without admin_project). */
async function adminProject(c: Context) {
  const auth = await authenticate(c);
  return { auth, project: await userProject(c, auth, 'admin_project') };
}

async function present(c: Context, rows: readonly ProtectedBranchRow[]) {
  const { db, config } = appContext(c);
  const rules = await rulesOf(db, rows.map((row) => row.id));
  return rows.map((row) => toProtectedBranch(row, rules, config));
}

const branchName = (c: Context) => c.req.param('name') ?? '';

export const protectedBranchRoutes = new Hono<AppEnv>();

protectedBranchRoutes
  .get('/projects/:id/protected_branches', documented({ summary: "List a project's protected branches", params: listParams, responses: { 200: 'ProtectedBranch[]', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    const p = await params(c, listParams);
    const rows = await paginate(c, protectedBranchesQuery(appContext(c).db, project.row.id, p.search), (q) => q.orderBy('id'));
    return c.json(await present(c, rows));
  })

  .get('/projects/:id/protected_branches/:name', documented({ summary: 'Get a protected branch', responses: { 200: 'ProtectedBranch', ...REFUSED } }), async (c) => {
    const { project } = await adminProject(c);
    const row = await findProtectedBranch(appContext(c).db, project.row.id, branchName(c));
    if (!row) throw recordNotFound('ProtectedBranch');
    return c.json((await present(c, [row]))[0]);
  })

  .post('/projects/:id/protected_branches', documented({ summary: 'Protect a branch (EE: allowed_to_push[], allowed_to_merge[], allowed_to_unprotect[] as in GitLab)', params: { ...createParams, ...unprotectParams, ...codeOwnerParams }, responses: { 201: 'ProtectedBranch', ...REFUSED, 409: 'Error', 422: 'Error' } }), rendersInvalid(fullMessages(422)), async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const { db, config } = appContext(c);
    const ee = licensed(config.plan, 'ee');
    const byUser = licensed(config.plan, 'protected_refs_for_users');
    // Grape's order: name, push, merge, then EE's unprotect, allowed_to_*, code_owner_approval_required.
    const raw = await rawParams(c);
    const declared = declaration(raw);
    const p = declared.parse(createParams);
    const unprotect = ee ? declared.parse(unprotectParams).unprotect_access_level : undefined;
    const allowed = Object.fromEntries(DECLARED_KINDS.map((kind) => [kind, byUser ? allowedRules(raw, kind, declared.check) : []])) as Record<AccessKind, RuleInput[]>;
    const codeOwners = ee ? declared.parse(codeOwnerParams).code_owner_approval_required : false;
    declared.done();
    if (await findProtectedBranch(db, project.row.id, p.name)) throw conflict(alreadyProtected(p.name));
    const access: Record<AccessKind, AccessInput> = {
      merge: { level: p.merge_access_level, allowed: allowed.merge },
      push: { level: p.push_access_level, allowed: allowed.push },
      unprotect: { level: unprotect, allowed: allowed.unprotect },
    };
    const named = ACCESS_KINDS.flatMap((kind) => allowed[kind]);
    const userIds = named.flatMap((r) => (r.user_id === undefined ? [] : [r.user_id]));
    const groupIds = named.flatMap((r) => (r.group_id === undefined ? [] : [r.group_id]));
    const id = await newId(w, protectedBranches);
    await run(
      w,
      protectedBranches,
      id,
      async (trx) => ({
        type: 'ProtectBranch',
        projectId: project.row.id,
        name: p.name,
        access,
        // EE: ignored unless the licence has it (code_owner_approval_required_available?).
        codeOwnerApprovalRequired: licensed(config.plan, 'code_owner_approval_required') && codeOwners,
        facts: await ruleFacts(trx, project.row.id, userIds, groupIds, today(c)),
      }),
    );
    const row = await findProtectedBranch(db, project.row.id, p.name);
    return c.json((await present(c, [row!]))[0], 201);
  })

  .patch('/projects/:id/protected_branches/:name', documented({ summary: "Update a protected branch's code owner approval (EE)", params: codeOwnerParams, responses: { 200: 'ProtectedBranch', ...REFUSED } }), async (c) => {
    const { config } = appContext(c);
    // EE's endpoint: CE has no such route.
    if (!licensed(config.plan, 'ee')) throw routeNotFound();
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const p = await params(c, codeOwnerParams);
    if (!licensed(config.plan, 'code_owner_approval_required')) throw refused("Feature 'Code Owner Approval Required' is not enabled");
    const { db } = appContext(c);
    const row = await findProtectedBranch(db, project.row.id, branchName(c));
    if (!row) throw recordNotFound('ProtectedBranch');
    await run(w, protectedBranches, row.id, { type: 'UpdateProtectedBranch', codeOwnerApprovalRequired: p.code_owner_approval_required });
    return c.json((await present(c, [(await findProtectedBranch(db, project.row.id, row.name))!]))[0]);
  })

  .delete('/projects/:id/protected_branches/:name', documented({ summary: 'Unprotect a branch', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const { auth, project } = await adminProject(c);
    const w = writerFor(c, auth);
    const { db } = appContext(c);
    const row = await findProtectedBranch(db, project.row.id, branchName(c));
    if (!row) throw recordNotFound('ProtectedBranch');
    checkUnmodifiedSince(c, row.updated_at);
    await run(w, protectedBranches, row.id, { type: 'UnprotectBranch' });
    return c.body(null, 204);
  });
