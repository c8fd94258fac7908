import type { HookFlag } from './decider.js';

/**
 * What GitLab 12.10 posts to a webhook, as pure functions of facts the delivery reactor reads
 * (src/commands/hook-deliveries.ts): Project#hook_attrs, User#hook_attrs, Commit#hook_attrs,
 * Gitlab::DataBuilder::Push and ::Repository, Gitlab::HookData::MergeRequestBuilder. Keys are
 * in GitLab's order: the receiver sees the same bytes GitLab's `to_json` writes.
 */

// ───────────────────────────── Hook names ─────────────────────────────

/** GitLab's hook scopes (WebHook `triggers`), the name each delivery is made under. */
export type HookName =
  | 'push_hooks'
  | 'tag_push_hooks'
  | 'merge_request_hooks'
  | 'issue_hooks'
  | 'confidential_issue_hooks'
  | 'note_hooks'
  | 'confidential_note_hooks'
  | 'job_hooks'
  | 'pipeline_hooks'
  | 'wiki_page_hooks'
  | 'repository_update_hooks'
  | 'system_hooks';

/** The column a hook subscribes to a scope with (ProjectHook/GroupHook/SystemHook `triggers`). */
export const HOOK_NAME_FLAG: Readonly<Record<Exclude<HookName, 'system_hooks'>, HookFlag>> = {
  push_hooks: 'push_events',
  tag_push_hooks: 'tag_push_events',
  merge_request_hooks: 'merge_requests_events',
  issue_hooks: 'issues_events',
  confidential_issue_hooks: 'confidential_issues_events',
  note_hooks: 'note_events',
  confidential_note_hooks: 'confidential_note_events',
  job_hooks: 'job_events',
  pipeline_hooks: 'pipeline_events',
  wiki_page_hooks: 'wiki_page_events',
  repository_update_hooks: 'repository_update_events',
};

/** The scopes SystemHook has besides system events (SystemHook `triggers`, 12.10). */
export const SYSTEM_HOOK_SCOPES: readonly HookName[] = ['repository_update_hooks', 'push_hooks', 'tag_push_hooks', 'merge_request_hooks'];

/**
 * `X-Gitlab-Event` (WebHookService.hook_to_event, 12.10): `hook_name.singularize.titleize`
 * ("Push Hook", "Tag Push Hook", "Merge Request Hook"); a system hook is always called with
 * 'system_hooks', so "System Hook".
 */
export function gitlabEventHeader(hookName: HookName, systemHook: boolean): string {
  const name = systemHook ? 'system_hooks' : hookName;
  return name
    .replace(/s$/, '')
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/**
 * BaseBuilder.absolute_image_urls: a description's or note's relative image links
 * (`![title](url)`, not `http(s)://` nor `//`) made absolute under the instance's URL, outside
 * fenced code blocks and multi-line HTML blocks, as hook payloads carry them.
 */
export function absoluteImageUrls(markdown: string | null, instanceUrl: string): string | null {
  if (!markdown) return markdown;
  return markdown.replace(MARKDOWN_SIMPLE_IMAGE, (whole, ...args) => {
    const groups = args.at(-1) as { image?: string; title?: string; url?: string };
    return groups.image === undefined ? whole : `![${groups.title}](${instanceUrl}/${groups.url})`;
  });
}

// Gitlab::Regex.markdown_code_or_html_blocks, then the image: Ruby's /m is JavaScript's /s, and its ^ $ always match at lines (/m).
const MARKDOWN_SIMPLE_IMAGE = /(?<code>^```.+?\n```\ *$)|(?<html>^<[^>]+?>\ *\n.+?\n<\/[^>]+?>\ *$)|(?<image>!\[(?<title>[^\n]*?)\]\((?<url>(?!(?:https?:\/\/|\/\/))[^\n]+?)\))/gms;

// ───────────────────────────── Facts ─────────────────────────────

export interface ProjectFacts {
  /** Gitlab.config.gitlab.url: the instance's external URL, without a trailing slash. */
  readonly instanceUrl: string;
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly description: string | null;
  readonly webUrl: string;
  readonly avatarUrl: string | null;
  readonly sshUrl: string;
  readonly httpUrl: string;
  /** `namespace.name`. */
  readonly namespaceName: string;
  readonly visibility: 'private' | 'internal' | 'public';
  readonly visibilityLevel: number;
  readonly pathWithNamespace: string;
  readonly defaultBranch: string | null;
  readonly ciConfigPath: string | null;
}

export interface UserFacts {
  readonly id: number;
  readonly name: string;
  readonly username: string;
  readonly email: string;
  readonly avatarUrl: string | null;
}

export interface CommitFacts {
  readonly id: string;
  readonly message: string;
  /** `committed_date.xmlschema`: the committer's time in its own offset. */
  readonly timestamp: string;
  readonly authorName: string;
  readonly authorEmail: string;
  readonly added: readonly string[];
  readonly modified: readonly string[];
  readonly removed: readonly string[];
}

// ───────────────────────────── Formats ─────────────────────────────

/** Ruby's Time#xmlschema of a UTC time: `2012-07-21T07:30:54Z`. */
export const xmlschema = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A time of hook data that went through Sidekiq's JSON (Time#to_s): `2013-12-03 17:23:34 UTC`. */
export const sidekiqTime = (date: Date | null) => (date ? date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC') : null);

/** Git's time and offset as Ruby's Time#xmlschema writes them: `2011-12-12T14:27:31+02:00`. */
export function gitXmlschema(seconds: number, offsetMinutes: number): string {
  const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  const abs = Math.abs(offsetMinutes);
  return `${local}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

// ───────────────────────────── Attributes ─────────────────────────────

/** Project#hook_attrs (12.10), with the backward-compatible keys unless `backward` is false. */
export function projectHookAttrs(p: ProjectFacts, backward = true) {
  const attrs = {
    id: p.id,
    name: p.name,
    description: p.description,
    web_url: p.webUrl,
    avatar_url: p.avatarUrl,
    git_ssh_url: p.sshUrl,
    git_http_url: p.httpUrl,
    namespace: p.namespaceName,
    visibility_level: p.visibilityLevel,
    path_with_namespace: p.pathWithNamespace,
    default_branch: p.defaultBranch,
    ci_config_path: p.ciConfigPath,
  };
  return backward ? { ...attrs, homepage: p.webUrl, url: p.sshUrl, ssh_url: p.sshUrl, http_url: p.httpUrl } : attrs;
}

/** The deprecated `repository` of push data: hook_attrs.slice(:name, :url, :description, :homepage, :git_http_url, :git_ssh_url, :visibility_level). */
const pushRepository = (p: ProjectFacts) => ({
  name: p.name,
  url: p.sshUrl,
  description: p.description,
  homepage: p.webUrl,
  git_http_url: p.httpUrl,
  git_ssh_url: p.sshUrl,
  visibility_level: p.visibilityLevel,
});

/** User#hook_attrs (12.10). */
export const userHookAttrs = (u: UserFacts) => ({ name: u.name, username: u.username, avatar_url: u.avatarUrl });

/** Commit#hook_attrs(with_changed_files: true); `title` is the message's first line. */
export const commitHookAttrs = (c: CommitFacts, webUrl: string) => ({
  id: c.id,
  message: c.message,
  title: c.message.split('\n')[0]!,
  timestamp: c.timestamp,
  url: `${webUrl}/commit/${c.id}`,
  author: { name: c.authorName, email: c.authorEmail },
  added: c.added,
  modified: c.modified,
  removed: c.removed,
});

// ───────────────────────────── Push and tag push ─────────────────────────────

export interface PushFacts {
  readonly kind: 'push' | 'tag_push';
  readonly before: string;
  readonly after: string;
  /** `refs/heads/<branch>` or `refs/tags/<tag>`. */
  readonly ref: string;
  readonly checkoutSha: string | null;
  /** The tag's message (tag push); null otherwise. */
  readonly message: string | null;
  readonly user: UserFacts;
  readonly project: ProjectFacts;
  /** Oldest first, at most 20 (`commits.last(20)`). */
  readonly commits: readonly CommitFacts[];
  readonly totalCommitsCount: number;
}

/** Gitlab::DataBuilder::Push.build (12.10). */
export const pushData = (f: PushFacts) => ({
  object_kind: f.kind,
  event_name: f.kind,
  before: f.before,
  after: f.after,
  ref: f.ref,
  checkout_sha: f.checkoutSha,
  message: f.message,
  user_id: f.user.id,
  user_name: f.user.name,
  user_username: f.user.username,
  user_email: f.user.email,
  user_avatar: f.user.avatarUrl,
  project_id: f.project.id,
  project: projectHookAttrs(f.project),
  commits: f.commits.map((c) => commitHookAttrs(c, f.project.webUrl)),
  total_commits_count: f.totalCommitsCount,
  push_options: {},
  repository: pushRepository(f.project),
});

/** Gitlab::DataBuilder::Repository.update (12.10): what system hooks with repository_update_events get after a push. */
export const repositoryUpdateData = (project: ProjectFacts, user: UserFacts, change: { before: string; after: string; ref: string }) => ({
  event_name: 'repository_update',
  user_id: user.id,
  user_name: user.name,
  user_email: user.email,
  user_avatar: user.avatarUrl,
  project_id: project.id,
  project: projectHookAttrs(project),
  changes: [change],
  refs: [change.ref],
});
