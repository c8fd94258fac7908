// PROVISIONAL: the `issuable` branch brings the full module (mentions too).

/** MergeRequest::WIP_REGEX (GitLab 12): `WIP:`, `[WIP]` or `WIP ` at the start, any case. */
export const isWorkInProgress = (title: string): boolean => /^\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+\s*/i.test(title);

/** Taskable: the task list items of a description, and how many are checked. */
export function taskCompletionStatus(description: string | null): { count: number; completed_count: number } {
  let count = 0;
  let completed = 0;
  for (const line of (description ?? '').split('\n')) {
    const match = /^\s*(?:[-+*]|\d+[.)])\s+\[([ xX])\]\s/.exec(line);
    if (!match) continue;
    count++;
    if (match[1] !== ' ') completed++;
  }
  return { count, completed_count: completed };
}
