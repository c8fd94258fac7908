import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { disableIntegration, integrationSecrets, saveIntegration } from '../../commands/integrations.js';
import { ALIASES, BRANCH_CHOICES, type EventFlag, type FieldSpec, KINDS, type KindSpec, kindOf } from '../../domain/integrations/catalogue.js';
import { licensed } from '../../domain/policy/licensed.js';
import { activeIntegrations, findIntegration } from '../../projections/integrations/queries.js';
import { toIntegration, toIntegrationBasic } from '../entities/integrations.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { routeNotFound } from '../kernel/errors.js';
import { declaration, optional, params, rawParams, required, t, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { userProject } from '../kernel/scope.js';

/**
 * GitLab's API::Services (12.x), under /projects/:id/services and, as GitLab 14 renamed it
 * and today's clients call it, /projects/:id/integrations. Every route is `before {
 * authenticate! }` and `before { authorize_admin_project }`: maintainers and owners, the
 * project's 404 or 403 before any parameter is looked at.
 */

/** A kind this instance serves: an EE kind without its licence is one GitLab CE has no route for. */
function servedKind(c: Context, slug: string): KindSpec | undefined {
  const kind = kindOf(slug);
  if (!kind) return undefined;
  return kind.feature && !licensed(appContext(c).config.plan, kind.feature) ? undefined : kind;
}

const schemaOf = (field: FieldSpec): z.ZodType<string | number | boolean> => (field.type === 'boolean' ? t.boolean() : field.type === 'integer' ? t.integer() : t.string());

/** The PUT's declaration: the kind's fields (`requires` / `optional`), its event flags, the deprecated aliases it had. */
const shapes = new Map<string, Shape>();
function putShape(kind: KindSpec): Shape {
  let shape = shapes.get(kind.slug);
  if (!shape) {
    shape = {};
    for (const field of kind.fields) shape[field.name] = field.required ? required(schemaOf(field)) : optional(schemaOf(field));
    for (const flag of kind.events) shape[flag] = optional(t.boolean());
    if (kind.fields.some((f) => f.name === ALIASES.notify_only_default_branch)) shape.notify_only_default_branch = optional(t.boolean());
    if (kind.events.includes(ALIASES.confidental_note_events)) shape.confidental_note_events = optional(t.boolean());
    shapes.set(kind.slug, shape);
  }
  return shape;
}

/** The PUT's parameters by slug, for its documentation: every kind's (one this licence does not serve answers 404). */
const PUT_SHAPES = Object.fromEntries(KINDS.map((kind) => [kind.slug, putShape(kind)]));

/** The declared parameters as the command takes them, the aliases folded into what replaced them. */
function changeOf(kind: KindSpec, parsed: Record<string, unknown>) {
  const values: Record<string, string | number | boolean> = {};
  for (const field of kind.fields) {
    const value = parsed[field.name];
    if (value !== undefined) values[field.name] = value as string | number | boolean;
  }
  const flags: Partial<Record<EventFlag, boolean>> = {};
  for (const flag of kind.events) if (parsed[flag] !== undefined) flags[flag] = parsed[flag] as boolean;
  // GitLab: `branches_to_be_notified ||= notify_only_default_branch? ? "default" : "all"`.
  if (parsed.notify_only_default_branch !== undefined && values.branches_to_be_notified === undefined) {
    values.branches_to_be_notified = parsed.notify_only_default_branch ? BRANCH_CHOICES[1] : BRANCH_CHOICES[0];
  }
  if (parsed.confidental_note_events !== undefined && flags.confidential_note_events === undefined) flags.confidential_note_events = parsed.confidental_note_events as boolean;
  return { values, flags };
}

/** `requires :service_slug, values: SERVICES.keys` (GitLab 14's /integrations: `:slug`). */
async function slugParam(c: Context, name: string): Promise<KindSpec> {
  const kind = servedKind(c, c.req.param('slug') ?? '');
  const p = declaration(await rawParams(c));
  p.check(kind ? undefined : `${name} does not have a valid value`);
  p.done();
  return kind!;
}

async function present(c: Context, projectId: number, kind: KindSpec) {
  const { db } = appContext(c);
  const row = await findIntegration(db, projectId, kind.slug);
  return toIntegration(kind, row, row ? await integrationSecrets(db, projectId, kind.slug) : {});
}

function routesUnder(prefix: 'services' | 'integrations') {
  const slugName = prefix === 'services' ? 'service_slug' : 'slug';
  return new Hono<AppEnv>()
    .get(`/projects/:id/${prefix}`, documented({ summary: 'Get all active project services', responses: { 200: 'ProjectServiceBasic[]', ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const project = await userProject(c, auth, 'admin_project');
      await params(c, {});
      const plan = appContext(c).config.plan;
      const rows = await activeIntegrations(appContext(c).db, project.row.id);
      return c.json(
        rows.flatMap((row) => {
          const kind = kindOf(row.kind);
          return kind && (!kind.feature || licensed(plan, kind.feature)) ? [toIntegrationBasic(kind, row)] : [];
        }),
      );
    })

    .get(`/projects/:id/${prefix}/:slug`, documented({ summary: 'Get the service settings for project', responses: { 200: 'ProjectService', ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const project = await userProject(c, auth, 'admin_project');
      const kind = await slugParam(c, slugName);
      return c.json(await present(c, project.row.id, kind));
    })

    .put(
      `/projects/:id/${prefix}/:slug`,
      documented({ summary: "Set up a service for project: the slug's kind's parameters (one route per kind in GitLab)", paramsByPath: { name: 'slug', shapes: PUT_SHAPES }, responses: { 200: 'ProjectService', ...REFUSED } }),
      async (c) => {
        // One route per kind in GitLab: an unknown slug matches none.
        const kind = servedKind(c, c.req.param('slug'));
        if (!kind) throw routeNotFound();
        const w = await requireWriter(c);
        const project = await userProject(c, w.auth, 'admin_project');
        const p = declaration(await rawParams(c));
        const parsed = p.parse(putShape(kind)) as Record<string, unknown>;
        p.done();
        const { values, flags } = changeOf(kind, parsed);
        await saveIntegration(w, { projectId: project.row.id, kind, values, flags });
        return c.json(await present(c, project.row.id, kind));
      },
    )

    .delete(`/projects/:id/${prefix}/:slug`, documented({ summary: 'Delete a service for project', responses: { 204: null, ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const project = await userProject(c, w.auth, 'admin_project');
      const kind = await slugParam(c, slugName);
      await disableIntegration(w, { projectId: project.row.id, kind: kind.slug });
      return c.body(null, 204);
    });
}

export const integrationRoutes = new Hono<AppEnv>().route('/', routesUnder('services')).route('/', routesUnder('integrations'));
