/**
 * The integration kinds of GitLab 12 (lib/api/helpers/services_helpers.rb's `services`, EE's
 * ee/lib/ee/api/helpers/services_helpers.rb, the models' `supported_events`, doc/api/services.md
 * of 12.10), as data: one row per kind, no code per kind.
 */


/** The event columns every integration has (Service's table), all true for a new one (`default_value_for`). */
export const EVENT_FLAGS = [
  'commit_events',
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'tag_push_events',
  'note_events',
  'confidential_note_events',
  'pipeline_events',
  'wiki_page_events',
  'job_events',
  /** Not an event, but a column beside them (Jira's comments), shown with them and true by default. */
  'comment_on_event_enabled',
] as const;
export type EventFlag = (typeof EVENT_FLAGS)[number];
export type Flags = Readonly<Record<EventFlag, boolean>>;

export const DEFAULT_FLAGS: Flags = Object.fromEntries(EVENT_FLAGS.map((flag) => [flag, true])) as Record<EventFlag, boolean>;

export type FieldType = 'string' | 'boolean' | 'integer';

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Grape's `requires` (and the model's presence validation when active). */
  readonly required?: boolean;
  /** An http(s) URL the integration calls: PublicUrlValidator and the SSRF guard. */
  readonly url?: boolean;
  /** One of these values (the model's inclusion validation). */
  readonly values?: readonly string[];
}

/** EE licence features (ee/app/models/license.rb) of the kinds EE adds. */
export type IntegrationFeature = 'jenkins_integration' | 'github_project_service_integration';

export interface KindSpec {
  readonly slug: string;
  /** The model's `title` (a `title` property, where the kind has one, shows instead when set). */
  readonly title: string;
  readonly fields: readonly FieldSpec[];
  /** The event flags the kind takes as parameters (its `supported_events`). */
  readonly events: readonly EventFlag[];
  /** Properties a new one starts with (the model's initialize_properties). */
  readonly defaults?: Readonly<Record<string, PropertyValue>>;
  readonly feature?: IntegrationFeature;
  /**
   * The chat webhook format it POSTs notifications in (src/domain/integrations/chat-payloads.ts):
   * a kind with one is sent over HTTP by the delivery sender; the others' deliveries are only
   * recorded.
   */
  readonly chat?: ChatFormat;
}

export type PropertyValue = string | number | boolean | null;
export type Properties = Readonly<Record<string, PropertyValue>>;

/** `branches_to_be_notified`'s choices (ChatNotificationService::BRANCH_CHOICES). */
export const BRANCH_CHOICES = ['all', 'default', 'protected', 'default_and_protected'] as const;

/**
 * Deprecated parameters that set another one when it is not sent itself:
 * `notify_only_default_branch` (true → branches 'default', false → 'all'), replaced by
 * `branches_to_be_notified` in 12.4; `confidental_note_events`, spelled so in GitLab's docs.
 */
export const ALIASES = {
  notify_only_default_branch: 'branches_to_be_notified',
  confidental_note_events: 'confidential_note_events',
} as const;

// ───────────────────────────── Field groups ─────────────────────────────

const s = (name: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ name, type: 'string', ...more });
const req = (name: string, more: Partial<FieldSpec> = {}): FieldSpec => s(name, { required: true, ...more });
const url = (name: string, required = true): FieldSpec => s(name, { required, url: true });
const b = (name: string): FieldSpec => ({ name, type: 'boolean' });
const branches = s('branches_to_be_notified', { values: BRANCH_CHOICES });

const PUSH: readonly EventFlag[] = ['push_events'];
/** ChatNotificationService#supported_events. */
const CHAT_EVENTS: readonly EventFlag[] = [
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'note_events',
  'confidential_note_events',
  'tag_push_events',
  'pipeline_events',
  'wiki_page_events',
];
/** Chat notifications start with broken pipelines only; GitLab 12.4+ starts branches at 'default', the spec at 'all'. */
const CHAT_DEFAULTS = { notify_only_broken_pipelines: true, branches_to_be_notified: 'all' };
const CHANNELS = ['push', 'issue', 'confidential_issue', 'merge_request', 'note', 'confidential_note', 'tag_push', 'pipeline', 'wiki_page'].map((e) => s(`${e}_channel`));
const TRACKER = [url('new_issue_url'), url('issues_url'), url('project_url'), s('description'), s('title')];
const chatNotifications = (extra: readonly FieldSpec[] = []) => [url('webhook'), ...extra, b('notify_only_broken_pipelines'), branches];

// ───────────────────────────── The kinds ─────────────────────────────

export const KINDS: readonly KindSpec[] = [
  { slug: 'asana', title: 'Asana', fields: [req('api_key'), s('restrict_to_branch')], events: PUSH },
  { slug: 'assembla', title: 'Assembla', fields: [req('token'), s('subdomain')], events: PUSH },
  { slug: 'bamboo', title: 'Atlassian Bamboo CI', fields: [url('bamboo_url'), req('build_key'), req('username'), req('password')], events: PUSH },
  { slug: 'bugzilla', title: 'Bugzilla', fields: TRACKER, events: PUSH },
  { slug: 'buildkite', title: 'Buildkite', fields: [req('token'), url('project_url'), b('enable_ssl_verification')], events: PUSH },
  { slug: 'campfire', title: 'Campfire', fields: [req('token'), s('subdomain'), s('room')], events: PUSH },
  { slug: 'custom-issue-tracker', title: 'Custom Issue Tracker', fields: TRACKER, events: PUSH },
  { slug: 'discord', title: 'Discord Notifications', fields: chatNotifications(), events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'discord' },
  { slug: 'drone-ci', title: 'Drone CI', fields: [req('token'), url('drone_url'), b('enable_ssl_verification')], events: ['push_events', 'merge_requests_events', 'tag_push_events'] },
  { slug: 'emails-on-push', title: 'Emails on push', fields: [req('recipients'), b('disable_diffs'), b('send_from_committer_email'), branches], events: ['push_events', 'tag_push_events'], defaults: { branches_to_be_notified: 'all' } },
  { slug: 'external-wiki', title: 'External Wiki', fields: [url('external_wiki_url')], events: [] },
  { slug: 'flowdock', title: 'Flowdock', fields: [req('token')], events: PUSH },
  { slug: 'github', title: 'GitHub', fields: [req('token'), url('repository_url'), b('static_context')], events: ['pipeline_events'], feature: 'github_project_service_integration' },
  { slug: 'hangouts-chat', title: 'Hangouts Chat', fields: chatNotifications(), events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'hangouts-chat' },
  {
    slug: 'hipchat',
    title: 'HipChat',
    fields: [req('token'), s('room'), s('color'), b('notify'), s('api_version'), url('server', false)],
    events: CHAT_EVENTS.filter((e) => e !== 'wiki_page_events'),
  },
  { slug: 'irker', title: 'Irker (IRC gateway)', fields: [req('recipients'), s('default_irc_uri'), s('server_host'), { name: 'server_port', type: 'integer' }, b('colorize_messages')], events: PUSH },
  { slug: 'jenkins', title: 'Jenkins CI', fields: [url('jenkins_url'), req('project_name'), s('username'), s('password')], events: ['push_events', 'merge_requests_events', 'tag_push_events'], feature: 'jenkins_integration' },
  { slug: 'jenkins-deprecated', title: 'Jenkins CI (Deprecated)', fields: [url('project_url'), b('multiproject_enabled'), b('pass_unstable')], events: ['push_events', 'merge_requests_events'], feature: 'jenkins_integration' },
  {
    slug: 'jira',
    title: 'Jira',
    fields: [url('url'), url('api_url', false), req('username'), req('password'), s('jira_issue_transition_id')],
    // `comment_on_event_enabled` is a column; the route takes it with the events.
    events: ['commit_events', 'merge_requests_events', 'comment_on_event_enabled'],
  },
  { slug: 'mattermost', title: 'Mattermost notifications', fields: [...chatNotifications([s('username'), s('channel')]), ...CHANNELS], events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'slack' },
  { slug: 'mattermost-slash-commands', title: 'Mattermost slash commands', fields: [req('token'), s('username')], events: [] },
  { slug: 'microsoft-teams', title: 'Microsoft Teams Notification', fields: chatNotifications(), events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'microsoft-teams' },
  { slug: 'packagist', title: 'Packagist', fields: [req('username'), req('token'), url('server', false)], events: ['push_events', 'merge_requests_events', 'tag_push_events'] },
  { slug: 'pipelines-email', title: 'Pipelines emails', fields: [req('recipients'), b('add_pusher'), b('notify_only_broken_pipelines'), branches], events: ['pipeline_events'], defaults: CHAT_DEFAULTS },
  { slug: 'pivotaltracker', title: 'PivotalTracker', fields: [req('token'), s('restrict_to_branch')], events: PUSH },
  { slug: 'prometheus', title: 'Prometheus', fields: [url('api_url')], events: [] },
  { slug: 'pushover', title: 'Pushover', fields: [req('api_key'), req('user_key'), req('priority'), req('device'), req('sound')], events: PUSH },
  { slug: 'redmine', title: 'Redmine', fields: [url('new_issue_url'), url('project_url'), url('issues_url'), s('description')], events: PUSH },
  { slug: 'slack', title: 'Slack notifications', fields: [...chatNotifications([s('username'), s('channel')]), ...CHANNELS], events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'slack' },
  { slug: 'slack-slash-commands', title: 'Slack slash commands', fields: [req('token')], events: [] },
  { slug: 'teamcity', title: 'JetBrains TeamCity CI', fields: [url('teamcity_url'), req('build_type'), req('username'), req('password')], events: PUSH },
  { slug: 'unify-circuit', title: 'Unify Circuit', fields: chatNotifications(), events: CHAT_EVENTS, defaults: CHAT_DEFAULTS, chat: 'unify-circuit' },
  { slug: 'youtrack', title: 'YouTrack', fields: [url('project_url'), url('issues_url'), s('description')], events: PUSH },
];

const BY_SLUG = new Map(KINDS.map((kind) => [kind.slug, kind]));

export const kindOf = (slug: string): KindSpec | undefined => BY_SLUG.get(slug);

/** Service#api_field_names: fields whose names say they are credentials, or a title or description, are never shown. */
const HIDDEN = /(password|token|key|title|description)/;
export const shownFields = (kind: KindSpec) => kind.fields.filter((f) => !HIDDEN.test(f.name));

/**
 * What forgelog keeps outside the event log, sealed: every credential GitLab hides, and
 * `webhook`, whose URL is itself the credential of chat webhooks (shown as GitLab 12 does).
 */
export const isSecretField = (name: string) => /(password|token|key)/.test(name) || name === 'webhook';

/** The chat formats an integration may post in (src/domain/integrations/chat-payloads.ts). */
export const CHAT_FORMATS = ['slack', 'microsoft-teams', 'discord', 'hangouts-chat', 'unify-circuit'] as const;
export type ChatFormat = (typeof CHAT_FORMATS)[number];
