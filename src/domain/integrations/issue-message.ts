import type { ChatMessage, MessageFacts } from './chat-message.js';

export interface IssueMove {
  readonly iid: number;
  readonly title: string;
  /** Shown (as the attachment) for an opened issue only. */
  readonly description: string | null;
  readonly action: 'open' | 'close' | 'reopen';
}

/**
 * GitLab 12's ChatMessage::IssueMessage: the summary "[<path link>] Issue [#<iid> <title>](<issue
 * url>) <state> by <user>", the hook data's state after the action (a reopened issue is
 * `opened`); for an opened issue the description as the attachment, titled "#<iid> <title>"
 * and linked to the issue (color #C95823); Microsoft Teams' activity "Issue <state> by
 * <user>", "in <project link>", the issue's link and the avatar. The user is BaseMessage's
 * `user_combined_name` ("<full name> (<username>)"). An update sends nothing
 * (ChatNotificationService#get_message skips `action: update`).
 */
export function issueMessage(move: IssueMove, facts: MessageFacts): ChatMessage {
  const web = facts.project.webUrl;
  const projectLink = `[${facts.project.pathWithNamespace}](${web})`;
  const url = `${web}/-/issues/${move.iid}`;
  const title = `#${move.iid} ${move.title}`;
  const issueLink = `[${title}](${url})`;
  const state = move.action === 'close' ? 'closed' : 'opened';
  const user = facts.user ? (facts.user.name !== '' ? `${facts.user.name} (${facts.user.username})` : facts.user.username) : '';
  return {
    projectName: facts.project.pathWithNamespace,
    userName: facts.user?.username ?? '',
    userAvatar: facts.user?.avatarUrl ?? null,
    summary: `[${projectLink}] Issue ${issueLink} ${state} by ${user}`,
    ...(move.action === 'open' ? { details: { title, titleUrl: url, text: move.description ?? '', color: '#C95823' } } : {}),
    activity: { title: `Issue ${state} by ${user}`, subtitle: `in ${projectLink}`, text: issueLink, image: facts.user?.avatarUrl ?? '' },
  };
}
