import type { DomainError } from '../errors.js';

/**
 * `git push -o <option>` as GitLab 12.10 reads it (lib/gitlab/push_options.rb) and what
 * MergeRequests::PushOptionsHandlerService (12.10) decides from it before it runs the merge
 * request services, and how its errors reach the pusher (PostReceiveService's
 * push_options_warning, printed as an alert by the post-receive hook). Pure; the command is
 * src/commands/repository-push-options.ts. See docs/repository.md, "Push options".
 */

/** Gitlab::PushOptions::VALID_OPTIONS in 12.10: other namespaces and keys are dropped. */
const VALID_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  merge_request: ['create', 'description', 'label', 'merge_when_pipeline_succeeds', 'remove_source_branch', 'target', 'title', 'unlabel'],
  ci: ['skip'],
};
/** MULTI_VALUE_OPTIONS: the values are counted, not overwritten. */
const MULTI_VALUE = new Set(['merge_request.label', 'merge_request.unlabel']);
/** NAMESPACE_ALIASES. */
const ALIASES: Readonly<Record<string, string>> = { mr: 'merge_request' };
/** OPTION_MATCHER: `(?<namespace>[^\.]+)\.(?<key>[^=]+)=?(?<value>.*)`. */
const OPTION = /^([^.]+)\.([^=]+)=?(.*)$/s;

/** A single value: the text after `=`, or `true` when there is none (`value.presence || true`). */
export type OptionValue = string | true;

export interface MergeRequestPushOptions {
  readonly create?: OptionValue;
  readonly description?: OptionValue;
  readonly merge_when_pipeline_succeeds?: OptionValue;
  readonly remove_source_branch?: OptionValue;
  readonly target?: OptionValue;
  readonly title?: OptionValue;
  /** Label titles (each once, in the order first given). */
  readonly label?: readonly string[];
  readonly unlabel?: readonly string[];
}

export interface PushOptions {
  readonly mergeRequest: MergeRequestPushOptions | null;
  /** `ci.skip`: accepted; there are no pipelines to skip. */
  readonly ciSkip: boolean;
}

/**
 * Gitlab::PushOptions#parse_options: each `namespace.key[=value]`, the namespace and key
 * stripped, `mr` for `merge_request`; an unknown one is ignored; a later value overwrites an
 * earlier one, except the labels, which add up.
 */
export function parsePushOptions(raw: readonly string[]): PushOptions {
  const single: Record<string, OptionValue> = {};
  const multi: Record<string, string[]> = {};
  let ciSkip = false;
  for (const option of raw) {
    const match = OPTION.exec(option);
    if (!match) continue;
    let namespace = match[1]!.trim();
    const key = match[2]!.trim();
    const text = match[3]!.trim();
    namespace = ALIASES[namespace] ?? namespace;
    if (!VALID_OPTIONS[namespace]?.includes(key)) continue;
    const value: OptionValue = text === '' ? true : text;
    if (namespace === 'ci') {
      ciSkip = true;
      continue;
    }
    if (MULTI_VALUE.has(`${namespace}.${key}`)) {
      // A label option without a value counts `true`, which names no label.
      const list = (multi[key] ??= []);
      if (value !== true && !list.includes(value)) list.push(value);
    } else single[key] = value;
  }
  const hasMergeRequest = Object.keys(single).length > 0 || Object.keys(multi).length > 0;
  return { mergeRequest: hasMergeRequest ? { ...single, ...multi } : null, ciSkip };
}

/** Rails' boolean cast of an option assigned to a boolean attribute (`"false"`, `"0"`, `"off"`… are false). */
export function optionBoolean(value: OptionValue | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === true) return true;
  return !['0', 'f', 'false', 'off', 'F', 'FALSE', 'OFF'].includes(value);
}

/** An option's value as text (`true` as Ruby prints it). */
export const optionText = (value: OptionValue): string => (value === true ? 'true' : value);

// ───────────────────────────── The handler's checks ─────────────────────────────

/** PushOptionsHandlerService::LIMIT. */
export const PUSH_OPTIONS_BRANCH_LIMIT = 10;

export interface PushedChange {
  readonly ref: string;
  readonly newSha: string;
}

/**
 * PushOptionsHandlerService#get_branches (12.10): the pushed branches that are not deleted and
 * are not the target project's default branch, each once, in push order.
 */
export function pushOptionBranches(changes: readonly PushedChange[], defaultBranch: string | null): string[] {
  const out: string[] = [];
  for (const change of changes) {
    if (!change.ref.startsWith('refs/heads/') || /^0{40}$/.test(change.newSha)) continue;
    const branch = change.ref.slice('refs/heads/'.length);
    if (branch === defaultBranch || out.includes(branch)) continue;
    out.push(branch);
  }
  return out;
}

/** PushOptionsHandlerService#validate_service: the errors that stop it before any branch. */
export function pushOptionRefusals(input: {
  readonly fullPath: string;
  readonly mergeRequestsEnabled: boolean;
  readonly branches: readonly string[];
  readonly target: string | undefined;
  readonly targetExists: boolean;
}): string[] {
  const errors: string[] = [];
  if (!input.mergeRequestsEnabled) errors.push(`Merge requests are not enabled for project ${input.fullPath}`);
  if (input.branches.length > PUSH_OPTIONS_BRANCH_LIMIT) errors.push(`Too many branches pushed (${input.branches.length} were pushed, limit is ${PUSH_OPTIONS_BRANCH_LIMIT})`);
  if (input.target !== undefined && !input.targetExists) errors.push(`Branch ${input.target} does not exist`);
  return errors;
}

/**
 * MergeRequests::BuildService#assign_title_and_description (12.10), for a merge request the
 * option does not title: one commit gives its title (and its description, when none is
 * given); otherwise the branch name, `titleize.humanize`d; `WIP: ` before it when the source
 * brings no commit.
 */
export function builtTitle(branch: string, commits: readonly { readonly title: string; readonly description: string }[]): { title: string; description: string | null } {
  const single = commits.length === 1 ? commits[0]! : null;
  const humanized = branch.replace(/[-_\s]+/g, ' ').trim().toLowerCase();
  const title = single?.title ?? `${humanized.charAt(0).toUpperCase()}${humanized.slice(1)}`;
  const description = single && single.description.trim() !== '' ? single.description.trim() : null;
  return { title: commits.length === 0 ? `WIP: ${title}` : title, description };
}

/** What a model's failed save says (`errors.full_messages`), from a merge request command's refusal. */
export function fullMessagesOf(error: DomainError): string[] {
  if (error.messages && error.messages.length > 0) return [...error.messages];
  if (error.fields) {
    return Object.entries(error.fields).flatMap(([field, messages]) => {
      if (field === 'base') return [...messages];
      const human = field.replace(/\./g, '_').replace(/_id$/, '').replace(/_/g, ' ');
      return messages.map((m) => `${human.charAt(0).toUpperCase()}${human.slice(1)} ${m}`);
    });
  }
  return [error.text ?? error.subject ?? error.message];
}

// ───────────────────────────── What the pusher reads ─────────────────────────────

/** PostReceiveService#push_options_warning: the options as given, quoted, and the errors. */
export function pushOptionsWarning(raw: readonly string[], errors: readonly string[]): string {
  return `WARNINGS:\nError encountered with push options ${raw.map((option) => `'${option}'`).join(' ')}: ${errors.join('\n\n')}`;
}

/** The alert's width: 80 columns less git's `remote: ` prefix. */
const ALERT_WIDTH = 72;
/** Two columns of margin on each side. */
const ALERT_TEXT_WIDTH = ALERT_WIDTH - 4;

/**
 * The post-receive hook's alert (gitlab-shell's print_alert, 12.x): a rule of `=`, the
 * message wrapped at 68 columns on spaces with each line centred, a rule; blank lines around
 * each. One string per line, each ending with a newline (the `remote:` lines).
 */
export function alertLines(message: string): string[] {
  const lines: string[] = [];
  for (const paragraph of message.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w !== '')) {
      if (line !== '' && line.length + 1 + word.length > ALERT_TEXT_WIDTH) {
        lines.push(line);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(line);
  }
  const rule = '='.repeat(ALERT_WIDTH);
  const centred = lines.map((line) => (line === '' ? '' : `${' '.repeat(Math.max(Math.floor((ALERT_WIDTH - line.length) / 2), 0))}${line}`));
  return ['', rule, '', ...centred, '', rule, ''].map((line) => `${line}\n`);
}
