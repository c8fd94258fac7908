import { labelTextColor } from '../../domain/labels.js';
import type { LabelRow } from '../../projections/labels/tables.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

/**
 * Entities::ProjectLabel (GitLab 12): LabelBasic's fields, the counts when asked
 * (`with_counts`; 0 while forgelog has no issues and its merge requests carry no labels
 * yet), `subscribed` (no label subscriptions yet: false), the project's priority and
 * `is_project_label`. `description_html` is the description as HTML text: GitLab's
 * single-line Markdown pipeline, for plain text.
 */
export const toProjectLabel = (row: LabelRow, options: { withCounts?: boolean } = {}) => ({
  id: row.id,
  name: row.title,
  color: row.color,
  description: row.description,
  description_html: row.description === null ? '' : escapeHtml(row.description),
  text_color: labelTextColor(row.color),
  ...(options.withCounts ? { open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 } : {}),
  subscribed: false,
  priority: row.priority,
  is_project_label: true,
});

/** Entities::LabelBasic (GitLab 12.10): id, name, color, description, description_html, text_color. */
export function toLabelBasic(row: LabelRow) {
  const { id, name, color, description, description_html, text_color } = toProjectLabel(row);
  return { id, name, color, description, description_html, text_color };
}
