import { invalid } from '../errors.js';
import { isBlank } from '../users.js';

export interface UserStatus {
  readonly emoji: string;
  /** GitLab stores what was sent: null when only an emoji was set. */
  readonly message: string | null;
  readonly message_html: string;
}

/** GitLab: UserStatus::DEFAULT_EMOJI, used when a message is set without an emoji. */
const DEFAULT_STATUS_EMOJI = 'speech_balloon';
// GitLab validates the emoji against its emoji list; names are lower-case words, digits, '_', '+', '-'.
const EMOJI_NAME = /^[a-z0-9_+-]+$/;

/**
 * The status a user asks for, or null to clear it. GitLab (Users::SetStatusService): blank
 * emoji and message clear the status; a message without an emoji gets speech_balloon.
 */
export function requestedStatus(request: { readonly emoji: string | null; readonly message: string | null; readonly messageHtml: string }): UserStatus | null {
  if (isBlank(request.emoji) && isBlank(request.message)) return null;
  const emoji = isBlank(request.emoji) ? DEFAULT_STATUS_EMOJI : request.emoji!;
  const errors: Record<string, string[]> = {};
  if (!EMOJI_NAME.test(emoji)) errors.emoji = ['is not included in the list'];
  if (request.message !== null && request.message.length > 100) errors.message = ['is too long (maximum is 100 characters)'];
  if (Object.keys(errors).length > 0) throw invalid(errors);
  return { emoji, message: request.message, message_html: request.messageHtml };
}
