import { dateTime, entity, hash, int, values } from './dsl.js';

export const AuditEvent = entity("EE's Entities::AuditEvent: `details` are what was done, by whom, to what (`ip_address`, `entity_path` for administrators).", {
  id: int,
  author_id: int,
  entity_id: int,
  entity_type: values('User', 'Group', 'Project'),
  details: hash,
  created_at: dateTime,
});
