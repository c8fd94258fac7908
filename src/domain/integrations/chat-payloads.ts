import type { ChatFormat, Properties } from './catalogue.js';
import type { ChatMessage, DeliveryFlag } from './deliveries.js';

/**
 * The request bodies GitLab 12's chat services POST to their webhook, one renderer per wire
 * format (the catalogue's `chat` column names a kind's): the services' `notify` and the
 * client libraries they call (slack-notifier, MicrosoftTeams::Notifier, discordrb's webhook
 * builder, hangouts-chat's Sender, UnifyCircuitService's own post). Pure: the webhook URL is
 * not here — it is a secret, read when the request is sent.
 */


export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type Payload = { readonly [key: string]: JsonValue };

/** Slack::Notifier::Util::LinkFormatter: Markdown links `[text](url)` become `<url|text>` (the text holds no bracket). */
export const slackLinks = (text: string) => text.replace(/\[([^[\]]*)\]\(([^()\s]*)\)/g, (_, label: string, url: string) => `<${url}|${label}>`);

/** ChatNotificationService's per-event channel property (`push_channel` …; confidential ones fall back to the open ones). */
const CHANNEL_OF: Readonly<Record<DeliveryFlag, readonly string[]>> = {
  push_events: ['push_channel'],
  tag_push_events: ['tag_push_channel'],
  issues_events: ['issue_channel'],
  confidential_issues_events: ['confidential_issue_channel', 'issue_channel'],
  merge_requests_events: ['merge_request_channel'],
  note_events: ['note_channel'],
  confidential_note_events: ['confidential_note_channel', 'note_channel'],
  pipeline_events: ['pipeline_channel'],
  wiki_page_events: ['wiki_page_channel'],
};

const present = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/**
 * The channels a Slack-format message goes to (the event's channel, else `channel`, split on
 * commas — slack-notifier posts once per channel); [null] for the webhook's own channel.
 */
export function chatChannels(flag: DeliveryFlag, properties: Properties): readonly (string | null)[] {
  const named = [...CHANNEL_OF[flag], 'channel'].map((name) => properties[name]).find(present);
  if (!named) return [null];
  const channels = named.split(',').map((c) => c.trim()).filter(Boolean);
  return channels.length > 0 ? channels : [null];
}

/** One payload per request: several for a Slack-format message to several channels. */
export function renderChat(format: ChatFormat, message: ChatMessage, flag: DeliveryFlag, properties: Properties): Payload[] {
  switch (format) {
    case 'slack':
      return chatChannels(flag, properties).map((channel) => slack(message, channel, properties.username));
    case 'microsoft-teams':
      return [microsoftTeams(message)];
    case 'discord':
      return [discord(message)];
    case 'hangouts-chat':
      return [hangoutsChat(message)];
    case 'unify-circuit':
      return [unifyCircuit(message)];
  }
}

/**
 * The request for a payload. slack-notifier sends `payload=<json>` form-encoded (Slack and
 * Mattermost incoming webhooks read that); the others send JSON.
 */
export function chatRequest(format: ChatFormat, payload: Payload): { readonly contentType: string; readonly body: string } {
  if (format === 'slack') return { contentType: 'application/x-www-form-urlencoded', body: new URLSearchParams({ payload: JSON.stringify(payload) }).toString() };
  return { contentType: 'application/json', body: JSON.stringify(payload) };
}

// ───────────────────────────── Renderers ─────────────────────────────

/**
 * Slack and Mattermost (ChatNotificationService#notify: `Slack::Notifier.new(webhook,
 * channel:, username:).ping(pretext, attachments:, fallback:)`): the notifier's defaults
 * first, then text, attachments, fallback; links in Slack's form (markdown_format is off).
 */
function slack(message: ChatMessage, channel: string | null, username: Properties[string] | undefined): Payload {
  const d = message.details;
  const attachments: Payload[] = d
    ? [{ ...(d.title !== undefined ? { title: d.title } : {}), ...(d.titleUrl !== undefined ? { title_link: d.titleUrl } : {}), text: slackLinks(d.text), color: d.color ?? '#345' }]
    : [];
  return {
    ...(channel !== null ? { channel } : {}),
    ...(present(username) ? { username } : {}),
    text: slackLinks(message.summary),
    attachments,
    fallback: message.fallback ?? null,
  };
}

/**
 * Microsoft Teams (MicrosoftTeamsService#execute → MicrosoftTeams::Notifier#body, 12.x):
 * the activity section, then the attachments as a "Details" fact; Markdown links
 * (markdown_format). GitLab 12 sends no `@type`/`@context`: Teams takes the legacy card.
 */
function microsoftTeams(message: ChatMessage): Payload {
  const a = message.activity;
  const sections: Payload[] = [{ activityTitle: a.title, activitySubtitle: a.subtitle, activityText: a.text, activityImage: a.image }];
  if (message.details && message.details.text !== '') sections.push({ title: 'Details', facts: [{ name: 'Attachments', value: message.details.text }] });
  return { sections, title: message.projectName, summary: message.summary };
}

/** DiscordService::ATTACHMENT_REGEX's rewrite of commit lines ("[sha](url): msg\n - author"). */
const ATTACHMENT = /: (.*?)\n - (.*)\n*/g;

/**
 * Discord (DiscordService#notify: discordrb's Webhooks::Builder with one embed — author and
 * description — posted as its `to_json_hash`): Markdown (custom_data sets markdown).
 */
function discord(message: ChatMessage): Payload {
  const description = `${message.summary}\n${message.details?.text ?? ''}`.replace(ATTACHMENT, ' $1 - $2\n');
  const embed: Payload = {
    title: null,
    description,
    url: null,
    timestamp: null,
    color: null,
    footer: null,
    image: null,
    thumbnail: null,
    video: null,
    provider: null,
    author: { name: message.userName, url: null, icon_url: message.userAvatar },
    fields: [],
  };
  return { content: '', username: null, avatar_url: null, tts: false, embeds: [embed] };
}

/**
 * Hangouts Chat (HangoutsChatService#notify → HangoutsChat::Sender#simple): one `text` —
 * the summary, then the first attachment's `<url|title>` and text — in Slack's link form.
 */
function hangoutsChat(message: ChatMessage): Payload {
  const d = message.details;
  if (!d) return { text: slackLinks(message.summary) };
  const title = d.title === undefined ? undefined : d.titleUrl ? `<${d.titleUrl}|${d.title}>` : d.title;
  return { text: [slackLinks(message.summary), title, slackLinks(d.text)].filter((part) => part !== undefined).join('\n') };
}

/** Unify Circuit (UnifyCircuitService#notify): subject, Markdown text, `markdown: true`. */
function unifyCircuit(message: ChatMessage): Payload {
  return { subject: message.projectName, text: message.summary, markdown: true };
}
