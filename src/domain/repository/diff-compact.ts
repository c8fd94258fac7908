/**
 * git's post-processing of a line diff (xdiff's xdl_change_compact with the indent heuristic,
 * git's default since 2.14): a group of added or removed lines that could sit higher or lower
 * among equal lines is slid to where git puts it — lined up with a change on the other side
 * when it can be, else where the indentation around the cut reads best. The line diff itself
 * is the `diff` library's; this only moves its groups, so `git diff` and forgelog agree on
 * the hunks of, e.g., a function added after another one.
 *
 * `changed` arrays mark, per line of each side, whether the diff changed it; they are edited
 * in place.
 */

const MAX_INDENT = 200;
const MAX_BLANKS = 20;
const INDENT_HEURISTIC_MAX_SLIDING = 100;

const START_OF_FILE_PENALTY = 1;
const END_OF_FILE_PENALTY = 21;
const TOTAL_BLANK_WEIGHT = -30;
const POST_BLANK_WEIGHT = 6;
const RELATIVE_INDENT_PENALTY = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10;
const RELATIVE_OUTDENT_PENALTY = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17;
const RELATIVE_DEDENT_PENALTY = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17;
const INDENT_WEIGHT = 60;

interface Side {
  readonly lines: readonly string[];
  readonly changed: boolean[];
}

interface Group {
  start: number;
  end: number;
}

/** rchg with git's sentinels: nothing before the first line or after the last is changed. */
const isChanged = (side: Side, i: number) => i >= 0 && i < side.lines.length && side.changed[i] === true;

function groupInit(side: Side): Group {
  const g = { start: 0, end: 0 };
  while (isChanged(side, g.end)) g.end++;
  return g;
}

function groupNext(side: Side, g: Group): boolean {
  if (g.end === side.lines.length) return false;
  g.start = g.end + 1;
  for (g.end = g.start; isChanged(side, g.end); g.end++);
  return true;
}

function groupPrevious(side: Side, g: Group): boolean {
  if (g.start === 0) return false;
  g.end = g.start - 1;
  for (g.start = g.end; isChanged(side, g.start - 1); g.start--);
  return true;
}

function slideDown(side: Side, g: Group): boolean {
  if (g.end < side.lines.length && side.lines[g.start] === side.lines[g.end]) {
    side.changed[g.start++] = false;
    side.changed[g.end++] = true;
    while (isChanged(side, g.end)) g.end++;
    return true;
  }
  return false;
}

function slideUp(side: Side, g: Group): boolean {
  if (g.start > 0 && side.lines[g.start - 1] === side.lines[g.end - 1]) {
    side.changed[--g.start] = true;
    side.changed[--g.end] = false;
    while (isChanged(side, g.start - 1)) g.start--;
    return true;
  }
  return false;
}

/** A line's indentation (a tab to the next multiple of 8), -1 for a blank line. */
function indentOf(line: string): number {
  let indent = 0;
  for (const ch of line) {
    if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') return indent;
    if (ch === ' ') indent += 1;
    else if (ch === '\t') indent += 8 - (indent % 8);
    if (indent >= MAX_INDENT) return MAX_INDENT;
  }
  return -1;
}

interface Measurement {
  endOfFile: boolean;
  indent: number;
  preBlank: number;
  preIndent: number;
  postBlank: number;
  postIndent: number;
}

function measureSplit(side: Side, split: number): Measurement {
  const n = side.lines.length;
  const m: Measurement = { endOfFile: split >= n, indent: split >= n ? -1 : indentOf(side.lines[split]!), preBlank: 0, preIndent: -1, postBlank: 0, postIndent: -1 };
  for (let i = split - 1; i >= 0; i--) {
    m.preIndent = indentOf(side.lines[i]!);
    if (m.preIndent !== -1) break;
    m.preBlank += 1;
    if (m.preBlank === MAX_BLANKS) {
      m.preIndent = 0;
      break;
    }
  }
  for (let i = split + 1; i < n; i++) {
    m.postIndent = indentOf(side.lines[i]!);
    if (m.postIndent !== -1) break;
    m.postBlank += 1;
    if (m.postBlank === MAX_BLANKS) {
      m.postIndent = 0;
      break;
    }
  }
  return m;
}

function scoreSplit(m: Measurement, score: { effectiveIndent: number; penalty: number }) {
  if (m.preIndent === -1 && m.preBlank === 0) score.penalty += START_OF_FILE_PENALTY;
  if (m.endOfFile) score.penalty += END_OF_FILE_PENALTY;
  const postBlank = m.indent === -1 ? 1 + m.postBlank : 0;
  const totalBlank = m.preBlank + postBlank;
  score.penalty += TOTAL_BLANK_WEIGHT * totalBlank + POST_BLANK_WEIGHT * postBlank;
  const indent = m.indent !== -1 ? m.indent : m.postIndent;
  const anyBlanks = totalBlank !== 0;
  score.effectiveIndent += indent;
  if (indent === -1 || m.preIndent === -1 || indent === m.preIndent) return;
  if (indent > m.preIndent) score.penalty += anyBlanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
  else if (m.postIndent !== -1 && m.postIndent > indent) score.penalty += anyBlanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
  else score.penalty += anyBlanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
}

const scoreCmp = (a: { effectiveIndent: number; penalty: number }, b: { effectiveIndent: number; penalty: number }) =>
  INDENT_WEIGHT * Math.sign(a.effectiveIndent - b.effectiveIndent) + (a.penalty - b.penalty);

/** xdl_change_compact on one side (`side`), keeping the other side's groups in step. */
function compact(side: Side, other: Side) {
  const g = groupInit(side);
  const go = groupInit(other);
  for (;;) {
    if (g.end !== g.start) {
      let groupSize: number;
      let earliestEnd: number;
      let endMatchingOther: number;
      do {
        groupSize = g.end - g.start;
        endMatchingOther = -1;
        while (slideUp(side, g)) groupPrevious(other, go);
        earliestEnd = g.end;
        if (go.end > go.start) endMatchingOther = g.end;
        for (;;) {
          if (!slideDown(side, g)) break;
          groupNext(other, go);
          if (go.end > go.start) endMatchingOther = g.end;
        }
      } while (groupSize !== g.end - g.start);

      if (g.end === earliestEnd) {
        // It could not move.
      } else if (endMatchingOther !== -1) {
        while (go.end === go.start) {
          slideUp(side, g);
          groupPrevious(other, go);
        }
      } else {
        let shift = Math.max(earliestEnd, g.end - groupSize - 1, g.end - INDENT_HEURISTIC_MAX_SLIDING);
        let bestShift = -1;
        let best = { effectiveIndent: 0, penalty: 0 };
        for (; shift <= g.end; shift++) {
          const score = { effectiveIndent: 0, penalty: 0 };
          scoreSplit(measureSplit(side, shift), score);
          scoreSplit(measureSplit(side, shift - groupSize), score);
          if (bestShift === -1 || scoreCmp(score, best) <= 0) {
            best = score;
            bestShift = shift;
          }
        }
        while (g.end > bestShift) {
          slideUp(side, g);
          groupPrevious(other, go);
        }
      }
    }
    if (!groupNext(side, g)) break;
    groupNext(other, go);
  }
}

/** Both sides compacted, the old one first, as xdl_diff does. */
export function compactChanges(oldSide: Side, newSide: Side) {
  compact(oldSide, newSide);
  compact(newSide, oldSide);
}
