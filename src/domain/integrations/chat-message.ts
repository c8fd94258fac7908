/** What a message is made from besides the event: the project and the acting user as they are now. */
export interface MessageFacts {
  readonly project: { readonly id: number; readonly name: string; readonly pathWithNamespace: string; readonly webUrl: string };
  /** The event's actor; null when it no longer exists (GitLab writes "API" for a pipeline without one). */
  readonly user: { readonly name: string; readonly username: string; readonly avatarUrl: string | null } | null;
}

/**
 * A chat notification, neutral of the chat it goes to: GitLab's ChatMessage (BaseMessage and
 * its Push/Issue/Merge/Note/Pipeline/WikiPage subclasses) reduced to what every service's
 * `notify` reads. Links are Markdown (`[text](url)`); each renderer turns them into its chat's.
 */
export interface ChatMessage {
  /** `project_name` (path with namespace): Teams' title, Circuit's subject. */
  readonly projectName: string;
  readonly userName: string;
  readonly userAvatar: string | null;
  /** GitLab's `message`: the one-line summary ("Jane pushed to branch [main](…) of [g/p](…) ([Compare changes](…))"). */
  readonly summary: string;
  /** The attachment below it (commits, an issue's description), when there is one. */
  readonly details?: { readonly title?: string; readonly titleUrl?: string; readonly text: string; readonly color?: string };
  /** Microsoft Teams' activity section (MicrosoftTeams::Activity). */
  readonly activity: { readonly title: string; readonly subtitle: string; readonly text: string; readonly image: string };
  /** Slack's `fallback` (GitLab sets one for pipelines only). */
  readonly fallback?: string;
  /** What the branch rule reads: the ref pushed or built. A tag is always notified. */
  readonly ref?: { readonly name: string; readonly tag: boolean };
  /** What the pipeline rule reads: a pipeline's status. */
  readonly pipelineStatus?: string;
}
