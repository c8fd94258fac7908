import { bool, entity, extend, int, nullable, str } from './dsl.js';

export const LabelBasic = entity('Entities::LabelBasic.', { id: int, name: str, color: str, description: nullable(str), description_html: str, text_color: str });

export const ProjectLabel = extend(
  LabelBasic,
  'Entities::ProjectLabel (the counts with `with_counts=true`).',
  { open_issues_count: int, closed_issues_count: int, open_merge_requests_count: int, subscribed: bool, priority: nullable(int), is_project_label: bool },
  ['open_issues_count', 'closed_issues_count', 'open_merge_requests_count'],
);
