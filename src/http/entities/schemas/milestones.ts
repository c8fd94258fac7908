import { date, dateTime, entity, int, nullable, str, values } from './dsl.js';

export const Milestone = entity('Entities::Milestone of a project.', {
  id: int,
  iid: int,
  project_id: int,
  title: str,
  description: nullable(str),
  state: values('active', 'closed'),
  created_at: dateTime,
  updated_at: dateTime,
  due_date: nullable(date),
  start_date: nullable(date),
  web_url: str,
});
