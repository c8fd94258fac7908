import { Hono, type Context } from 'hono';
import { AUDIT_ENTITY_TYPES } from '../../domain/feeds/audit.js';
import { forbidden, notFound } from '../../domain/errors.js';
import { licensed } from '../../domain/policy/licensed.js';
import { auditEventsQuery, auditRecords, findAuditEvent, newestFirst, type AuditEventRow, type AuditFilters } from '../../projections/feeds/audit.js';
import { toAuditEvent } from '../entities/audit-events.js';
import { requireAdmin, requireUser } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { COUNT_LIMIT, paginate } from '../kernel/pagination.js';
import { declaration, integerCheck, optional, rawParams, t } from '../kernel/params.js';
import { userGroup } from '../kernel/scope.js';

const dates = { created_after: optional(t.datetime()), created_before: optional(t.datetime()) };
const instanceShape = { entity_type: optional(t.values(AUDIT_ENTITY_TYPES)), entity_id: optional(t.integer()), ...dates };

/** An audit id is a global position: digits that fit PostgreSQL's bigint, or no record has it. */
const positionOf = (text: string | undefined) => (text !== undefined && /^\s*\d{1,18}\s*$/.test(text) ? String(BigInt(text.trim())) : null);

/** Grape's `before` runs ahead of the parameters' validation: who may call and the licence come first. */
async function instanceCaller(c: Context) {
  await requireAdmin(c);
  // GitLab EE: forbidden! unless License.feature_available?(:admin_audit_log).
  if (!licensed(appContext(c).config.plan, 'admin_audit_log')) throw forbidden();
}

/** `authorize! :admin_group, user_group` (404 hidden, 403 below owner), then the group's audit_events licence (403). */
async function groupCaller(c: Context) {
  const auth = await requireUser(c);
  const group = await userGroup(c, auth, 'admin_group');
  if (!licensed(appContext(c).config.plan, 'audit_events')) throw forbidden();
  return group;
}

async function present(c: Context, rows: readonly AuditEventRow[]) {
  const { db, config } = appContext(c);
  const adminDetails = licensed(config.plan, 'admin_audit_log');
  return (await auditRecords(db, rows)).map((record) => toAuditEvent(record, { adminDetails }));
}

/** GitLab EE's API::AuditEvents (premium, administrators) and the group audit events of EE::API::Groups (starter, group owners). */
export const auditEventRoutes = new Hono<AppEnv>()
  .get('/audit_events', documented({ summary: 'List the instance audit events (EE)', params: instanceShape, auth: 'admin', responses: { 200: 'AuditEvent[]', 403: 'Error' } }), async (c) => {
    await instanceCaller(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const { entity_type, entity_id, created_after, created_before } = p.parse(instanceShape);
    // Grape: `given :entity_id do requires :entity_type end`.
    if (raw.entity_id !== undefined && raw.entity_id !== null && raw.entity_type === undefined) p.check('entity_type is missing');
    p.done();
    const filters: AuditFilters = { entityType: entity_type, entityId: entity_id, createdAfter: created_after, createdBefore: created_before };
    const rows = await paginate(c, auditEventsQuery(appContext(c).db, filters), newestFirst, { countLimit: COUNT_LIMIT });
    return c.json(await present(c, rows));
  })

  .get('/audit_events/:id', documented({ summary: 'Get an instance audit event (EE)', pathIds: ['id'], auth: 'admin', responses: { 200: 'AuditEvent', ...REFUSED } }), async (c) => {
    await instanceCaller(c);
    const p = declaration(await rawParams(c));
    p.check(integerCheck(c, 'id'));
    p.done();
    const position = positionOf(c.req.param('id'));
    const row = position === null ? undefined : await findAuditEvent(appContext(c).db, position);
    if (!row) throw notFound('Audit Event');
    return c.json((await present(c, [row]))[0]);
  })

  .get('/groups/:id/audit_events', documented({ summary: "List a group's audit events (EE)", params: dates, responses: { 200: 'AuditEvent[]', ...REFUSED } }), async (c) => {
    const group = await groupCaller(c);
    const p = declaration(await rawParams(c));
    const { created_after, created_before } = p.parse(dates);
    p.done();
    const filters: AuditFilters = { entityType: 'Group', entityId: group.row.id, createdAfter: created_after, createdBefore: created_before };
    const rows = await paginate(c, auditEventsQuery(appContext(c).db, filters), newestFirst, { countLimit: COUNT_LIMIT });
    return c.json(await present(c, rows));
  })

  .get('/groups/:id/audit_events/:audit_event_id', documented({ summary: "Get a group's audit event (EE)", responses: { 200: 'AuditEvent', ...REFUSED } }), async (c) => {
    const group = await groupCaller(c);
    // GitLab 12 declares no type for audit_event_id: anything that is not one of the group's records is its 404.
    const position = positionOf(c.req.param('audit_event_id'));
    const row = position === null ? undefined : await findAuditEvent(appContext(c).db, position, { entityType: 'Group', entityId: group.row.id });
    if (!row) throw notFound('Audit Event');
    return c.json((await present(c, [row]))[0]);
  });
