/**
 * The order of an epic's issues (EE's EpicIssue with GitLab 12's RelativePositioning): each
 * link has an integer position, the list reads them ascending (then by link id). A new issue
 * goes first (`move_to_start`); a move puts one between two others (`move_between`). Pure: the
 * command reads the epic's links and passes them in.
 */

export const MIN_POSITION = 0;
/** Gitlab::Database::MAX_INT_VALUE. */
export const MAX_POSITION = 2_147_483_647;
export const START_POSITION = Math.floor(MAX_POSITION / 2);
export const IDEAL_DISTANCE = 500;

/** A link of the epic, in the list's order. */
export interface PlacedLink {
  readonly id: number;
  readonly issueId: number;
  readonly position: number;
}

/** RelativePositioning.position_between: halfway, or IDEAL_DISTANCE from an open end. */
export function positionBetween(before: number | null, after: number | null): number {
  let [low, high] = [before ?? MIN_POSITION, after ?? MAX_POSITION];
  if (low > high) [low, high] = [high, low];
  const halfway = Math.floor((low + high) / 2);
  if (high - halfway < IDEAL_DISTANCE) return halfway;
  if (low === MIN_POSITION) return high - IDEAL_DISTANCE;
  if (high === MAX_POSITION) return low + IDEAL_DISTANCE;
  return halfway;
}

/** RelativePositioning#move_to_start: before the first of the epic's issues. */
export function positionAtStart(links: readonly PlacedLink[]): number {
  const first = links.length === 0 ? START_POSITION : Math.min(...links.map((l) => l.position));
  return positionBetween(first, MIN_POSITION);
}

/**
 * RelativePositioning#move_between(before, after), or move_after / move_before with one of
 * them: the new position, or null when two neighbours leave no integer between them (GitLab
 * then moves the sequence aside; here the epic's links are spread out first, `spread`).
 */
export function positionBetweenLinks(links: readonly PlacedLink[], before: PlacedLink | undefined, after: PlacedLink | undefined): number | null {
  const positions = links.map((l) => l.position);
  if (before && !after) {
    const next = positions.filter((p) => p > before.position);
    const high = next.length === 0 ? null : Math.min(...next);
    return high !== null && high - before.position < 2 ? null : positionBetween(before.position, high);
  }
  if (after && !before) {
    const previous = positions.filter((p) => p < after.position);
    const low = previous.length === 0 ? null : Math.max(...previous);
    return low !== null && after.position - low < 2 ? null : positionBetween(low, after.position);
  }
  if (!before || !after) return null;
  const [low, high] = before.position <= after.position ? [before.position, after.position] : [after.position, before.position];
  return high - low < 2 ? null : positionBetween(low, high);
}

/** The links in their order again, IDEAL_DISTANCE apart around START_POSITION. */
export function spread(links: readonly PlacedLink[]): PlacedLink[] {
  const first = START_POSITION - Math.floor(links.length / 2) * IDEAL_DISTANCE;
  return links.map((link, i) => ({ ...link, position: first + i * IDEAL_DISTANCE }));
}
