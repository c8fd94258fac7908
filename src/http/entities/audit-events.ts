import type { AuditRecord } from '../../projections/feeds/audit.js';

/**
 * EE::API::Entities::AuditEvent (GitLab 12): id, author_id, entity_id, entity_type, details,
 * created_at. `details` is what EE's AuditEventService recorded, in its order: the variable
 * keys, author_name, the target, then ip_address and entity_path, which EE adds only under
 * the admin_audit_log licence (premium). AuditEvent#formatted_details gives `from` and `to`
 * as strings (nil is "").
 */
export function toAuditEvent(record: AuditRecord, options: { adminDetails: boolean }) {
  const { description } = record;
  const action: Record<string, unknown> = { ...description.action };
  for (const key of ['from', 'to'] as const) if (key in action) action[key] = action[key] === null || action[key] === undefined ? '' : String(action[key]);
  return {
    id: record.id,
    author_id: record.authorId,
    entity_id: description.entity.id,
    entity_type: description.entity.type,
    details: {
      ...action,
      author_name: record.authorName,
      ...description.target,
      // Not in GitLab 12: GitLab 13's key for the administrator behind an impersonation, given for sudo too.
      ...(record.impersonatedBy === null ? {} : { impersonated_by: record.impersonatedBy }),
      ...(options.adminDetails ? { ip_address: record.ipAddress, entity_path: record.entityPath } : {}),
    },
    created_at: record.createdAt.toISOString(),
  };
}
