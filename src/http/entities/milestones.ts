import type { Config } from '../../config.js';
import type { MilestoneRow } from '../../projections/milestones/tables.js';
import { projectWebUrl } from './projects.js';
import { iso } from './users.js';

/** Gitlab::UrlBuilder of a project milestone: project_milestone_url, by iid. */
export const milestoneWebUrl = (config: Config, pathWithNamespace: string, iid: number) => `${projectWebUrl(config, pathWithNamespace)}/-/milestones/${iid}`;

/** Entities::Milestone (GitLab 12) of a project milestone: `project_id`, no `group_id`. */
export const toMilestone = (row: MilestoneRow, config: Config, pathWithNamespace: string) => ({
  id: row.id,
  iid: row.iid,
  project_id: row.project_id,
  title: row.title,
  description: row.description,
  state: row.state,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  due_date: row.due_date,
  start_date: row.start_date,
  web_url: milestoneWebUrl(config, pathWithNamespace, row.iid),
});
