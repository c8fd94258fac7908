import type { Config } from '../../config.js';
import type { SnippetView } from '../../projections/snippets/queries.js';
import { iso, toUserBasic } from './users.js';

/** Gitlab::UrlBuilder of a snippet: /snippets/:id, or under its project's path. */
const snippetUrl = (config: Config, row: Pick<SnippetView, 'id' | 'path_with_namespace'>) =>
  row.path_with_namespace === null ? `${config.externalUrl}/snippets/${row.id}` : `${config.externalUrl}/${row.path_with_namespace}/snippets/${row.id}`;

/** Entities::Snippet (12.10), which Entities::ProjectSnippet is unchanged. */
export const toSnippet = (row: SnippetView, config: Config) => ({
  id: row.id,
  title: row.title,
  file_name: row.file_name,
  description: row.description,
  visibility: row.visibility,
  author: toUserBasic(
    { id: row.author_id, name: row.author_name, username: row.author_username, state: row.author_state, avatar_url: row.author_avatar_url, email: row.author_email },
    config,
  ),
  updated_at: iso(row.updated_at),
  created_at: iso(row.created_at),
  project_id: row.project_id,
  web_url: snippetUrl(config, row),
});

/** Entities::PersonalSnippet: the snippet and its `raw_url`. */
export const toPersonalSnippet = (row: SnippetView, config: Config) => Object.assign(toSnippet(row, config), { raw_url: `${snippetUrl(config, row)}/raw` });

/** Entities::UserAgentDetail. */
export const toUserAgentDetail = (detail: { user_agent: string; ip: string }) => ({
  user_agent: detail.user_agent,
  ip_address: detail.ip,
  akismet_submitted: false,
});
