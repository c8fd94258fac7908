import { Hono, type Context } from 'hono';
import { conflict, notFound } from '../../domain/errors.js';
import type { LabelFields } from '../../domain/labels.js';
import { findLabel, findLabelByTitle, labelsQuery } from '../../projections/labels/queries.js';
import type { LabelRow } from '../../projections/labels/tables.js';
import { toProjectLabel } from '../entities/labels.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, optional, rawParams, required, t, withDefault, type RawParams, type Shape } from '../kernel/params.js';
import { userProject } from '../kernel/scope.js';
import { labels } from '../../domain/labels.js';
import { newId, run } from '../../commands/kernel/run.js';

/**
 * GitLab's API::Labels on projects (12.4+, with API::Helpers::LabelHelpers): members and,
 * on an open project, anyone signed in read; reporters write (admin_label). Authentication
 * first, then Grape's declaration, then the project (404 hidden, 403 without the ability).
 * Labels are addressed by `name` (a title, or since 12.4 an id) as a parameter or in the path,
 * or by `label_id`. Subscriptions and promotion to a group label are not served yet.
 */

const listShape = { with_counts: withDefault(t.boolean(), false), include_ancestor_groups: withDefault(t.boolean(), true) } satisfies Shape;
const createShape = { name: required(t.string()), color: required(t.string()), description: optional(t.string()), priority: optional(t.integer()) } satisfies Shape;
const updateFieldsShape = { new_name: optional(t.string()), color: optional(t.string()), description: optional(t.string()), priority: optional(t.integer()) } satisfies Shape;
const selectorShape = { label_id: optional(t.integer()), name: optional(t.string()) } satisfies Shape;
const showShape = { include_ancestor_groups: withDefault(t.boolean(), true) } satisfies Shape;
const UPDATE_FIELDS = ['new_name', 'color', 'description', 'priority'];

/**
 * `optional :priority, type: Integer, allow_blank: true`: '' and null are "no priority", and
 * a priority sent at all counts for at_least_one_of and means "set it" (LabelHelpers reads
 * `params.key?(:priority)`).
 */
function withBlankPriority(raw: RawParams): { raw: RawParams; priority: number | null | undefined } {
  if (!('priority' in raw)) return { raw, priority: undefined };
  const blank = raw.priority === '' || raw.priority === null;
  return { raw: blank ? { ...raw, priority: undefined } : raw, priority: blank ? null : undefined };
}

/** Grape's at_least_one_of counts a parameter sent, whatever its value. */
const atLeastOneSent = (raw: RawParams, names: readonly string[]) =>
  names.some((name) => name in raw) ? undefined : `${names.join(', ')} are missing, at least one parameter must be provided`;

/** Grape's exactly_one_of on the label selectors. */
function exactlyOneSelector(raw: RawParams) {
  const count = ['label_id', 'name'].filter((name) => raw[name] !== undefined && raw[name] !== null).length;
  if (count === 0) return 'label_id, name are missing, exactly one parameter must be provided';
  return count > 1 ? 'label_id, name are mutually exclusive' : undefined;
}

/** LabelHelpers#find_label: "404 Label Not Found". */
async function labelOf(c: Context, projectId: number, idOrTitle: string | number): Promise<LabelRow> {
  const row = await findLabel(appContext(c).db, projectId, idOrTitle);
  if (!row) throw notFound('Label');
  return row;
}

/** The update's declaration: the selector (parameters or path) and the fields, every failure together. */
async function updateDeclaration(c: Context, selectorInPath: boolean) {
  const original = await rawParams(c);
  const { raw, priority } = withBlankPriority(original);
  const p = declaration(raw);
  const selector = selectorInPath ? undefined : p.parse(selectorShape);
  const fields = p.parse(updateFieldsShape);
  p.check(atLeastOneSent(original, UPDATE_FIELDS));
  if (!selectorInPath) p.check(exactlyOneSelector(raw));
  p.done();
  const update: LabelFields = { title: fields.new_name, color: fields.color, description: fields.description, priority: priority === null ? null : fields.priority };
  return { selector: selector ? (selector.label_id ?? selector.name!) : c.req.param('name')!, update };
}

async function selectorDeclaration(c: Context): Promise<string | number> {
  const raw = await rawParams(c);
  const p = declaration(raw);
  const selector = p.parse(selectorShape);
  p.check(exactlyOneSelector(raw));
  p.done();
  return selector.label_id ?? selector.name!;
}

async function update(c: Context, selectorInPath: boolean) {
  const w = await requireWriter(c);
  const { selector, update: fields } = await updateDeclaration(c, selectorInPath);
  const project = await userProject(c, w.auth, 'admin_label');
  const label = await labelOf(c, project.row.id, selector);
  const { db } = appContext(c);
  await run(w, labels, label.id, { type: 'UpdateLabel', fields });
  return c.json(toProjectLabel((await findLabel(db, project.row.id, label.id))!));
}

async function destroy(c: Context, selector: () => Promise<string | number>) {
  const w = await requireWriter(c);
  const idOrTitle = await selector();
  const project = await userProject(c, w.auth, 'admin_label');
  const label = await labelOf(c, project.row.id, idOrTitle);
  await run(w, labels, label.id, { type: 'DeleteLabel' });
  return c.body(null, 204);
}

export const labelRoutes = new Hono<AppEnv>()
  .get('/projects/:id/labels', documented({ summary: 'List project labels', params: listShape, responses: { 200: 'ProjectLabel[]', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const p = declaration(await rawParams(c));
    const f = p.parse(listShape);
    p.done();
    const project = await userProject(c, auth, 'read_label');
    // include_ancestor_groups: the group's labels, which do not exist here yet.
    const rows = await paginate(c, labelsQuery(appContext(c).db, project.row.id), (q) => q.orderBy('title').orderBy('id'));
    return c.json(rows.map((row) => toProjectLabel(row, { withCounts: f.with_counts })));
  })

  .get('/projects/:id/labels/:name', documented({ summary: 'Get a project label', params: showShape, responses: { 200: 'ProjectLabel', ...REFUSED } }), async (c) => {
    const auth = await requireUser(c);
    const p = declaration(await rawParams(c));
    p.parse(showShape);
    p.done();
    const project = await userProject(c, auth, 'read_label');
    return c.json(toProjectLabel(await labelOf(c, project.row.id, c.req.param('name'))));
  })

  .post('/projects/:id/labels', documented({ summary: 'Create a project label', params: createShape, responses: { 201: 'ProjectLabel', ...REFUSED, 409: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const { raw, priority } = withBlankPriority(await rawParams(c));
    const p = declaration(raw);
    const parsed = p.parse(createShape);
    p.done();
    const project = await userProject(c, w.auth, 'admin_label');
    const { db } = appContext(c);
    // LabelHelpers#create_label: the name as sent already a title is a 409 before any
    // validation; a title taken once stripped is the model's uniqueness error (400).
    if (await findLabelByTitle(db, project.row.id, parsed.name)) throw conflict('Label already exists');
    const id = await newId(w, labels);
    const fields = { title: parsed.name, color: parsed.color, description: parsed.description, priority: priority === null ? null : parsed.priority };
    await run(w, labels, id, { type: 'CreateLabel', projectId: project.row.id, fields });
    return c.json(toProjectLabel((await findLabel(db, project.row.id, id))!), 201);
  })

  .put(
    '/projects/:id/labels',
    documented({ summary: 'Update a project label named by label_id or name', params: { ...selectorShape, ...updateFieldsShape }, responses: { 200: 'ProjectLabel', ...REFUSED } }),
    async (c) => update(c, false),
  )
  .put('/projects/:id/labels/:name', documented({ summary: 'Update a project label', params: updateFieldsShape, responses: { 200: 'ProjectLabel', ...REFUSED } }), async (c) => update(c, true))
  .delete('/projects/:id/labels', documented({ summary: 'Delete a project label named by label_id or name', params: selectorShape, responses: { 204: null, ...REFUSED } }), async (c) =>
    destroy(c, () => selectorDeclaration(c)),
  )
  .delete('/projects/:id/labels/:name', documented({ summary: 'Delete a project label', responses: { 204: null, ...REFUSED } }), async (c) =>
    destroy(c, async () => {
      const p = declaration(await rawParams(c));
      p.done();
      return c.req.param('name');
    }),
  );
