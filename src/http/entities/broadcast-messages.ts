import { isActive } from '../../domain/broadcast-messages.js';
import type { BroadcastMessageRow } from '../../projections/broadcast-messages/tables.js';

/**
 * Entities::BroadcastMessage (GitLab 12.x): id, message, starts_at, ends_at, color, font,
 * active (`active?`, against `now`: the command clock) and target_path.
 */
export function toBroadcastMessage(row: BroadcastMessageRow, now: Date) {
  return {
    id: row.id,
    message: row.message,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    color: row.color,
    font: row.font,
    active: isActive(row.starts_at, row.ends_at, now),
    target_path: row.target_path,
  };
}
