import type { Db } from '../database/database.js';
import { DomainError, conflict } from '../domain/errors.js';
import { type LabelCommand, labelDecider, labels } from '../domain/labels.js';
import { handleCommands, nextId } from './kernel/handler.js';
import { spec } from './kernel/run.js';
import type { CommandResult, CommandSpec, Writer } from './kernel/context.js';


// ───────────────────────────── Labels on first use ─────────────────────────────

/** Label::DEFAULT_COLOR of GitLab 12: the colour of a label created by its first use. */
export const DEFAULT_LABEL_COLOR = '#428BCA';

/**
 * The names of the API's `labels` parameter (Validations::Types::LabelsList): a comma list,
 * or an array of comma lists; each name stripped, blank ones dropped (GitLab fails to
 * create a blank label and leaves it out), each once.
 */
export function labelNames(value: string | readonly string[] | null | undefined): string[] {
  if (value === null || value === undefined) return [];
  const parts = (typeof value === 'string' ? [value] : value).flatMap((v) => v.split(','));
  return [...new Set(parts.map((name) => name.trim()).filter((name) => name !== ''))];
}

/** A label an issuable carries: found, or created by this use. */
export interface IssuableLabel {
  readonly id: number;
  readonly title: string;
  readonly created: boolean;
}

export interface LabelsOnFirstUse {
  /** The labels in the order of the names, without the names that found or made none. */
  readonly labels: readonly IssuableLabel[];
  /** The creations, to commit in the same `handleCommands` as the issuable's own command. */
  readonly specs: readonly CommandSpec<LabelCommand, any, any>[];
}

/** Would the Label model take this title? The decider's own validation, run on a new label. */
function creatable(projectId: number, title: string): boolean {
  try {
    labelDecider.decide({ type: 'CreateLabel', projectId, fields: { title, color: DEFAULT_LABEL_COLOR } }, labelDecider.initialState(0));
    return true;
  } catch (error) {
    if (error instanceof DomainError) return false;
    throw error;
  }
}

/**
 * GitLab 12's IssuableBaseService#find_or_create_label_ids through Labels::FindOrCreateService,
 * one name at a time: the project's label of that exact title (case-sensitive, as
 * `find_by(title:)`), else — only when `mayCreate` (the caller's `admin_label` on the
 * project) — a new label of that title in the default colour. A name that finds nothing and
 * may not (or cannot: over 255 characters) be created is left out without an error, as
 * GitLab does. Group labels of the project's ancestors do not exist here yet; when they do,
 * they are found here too (LabelsFinder include_ancestor_groups).
 *
 * Nothing is written: the creations come back as specs, for the caller to commit with the
 * issuable's event (`commitWithLabels` does both, and retries a race).
 */
export async function findOrCreateLabels(
  db: Db,
  input: { readonly projectId: number; readonly names: readonly string[]; readonly mayCreate: boolean },
): Promise<LabelsOnFirstUse> {
  const names = [...new Set(input.names.map((name) => name.trim()).filter((name) => name !== ''))];
  if (names.length === 0) return { labels: [], specs: [] };
  const rows = await db.selectFrom('labels').select(['id', 'title']).where('project_id', '=', input.projectId).where('title', 'in', names).execute();
  const existing = new Map(rows.map((row) => [row.title, row.id]));
  const found: IssuableLabel[] = [];
  const specs: CommandSpec<LabelCommand, any, any>[] = [];
  for (const title of names) {
    const id = existing.get(title);
    if (id !== undefined) {
      found.push({ id, title, created: false });
      continue;
    }
    if (!input.mayCreate || !creatable(input.projectId, title)) continue;
    const newId = await nextId(db, 'labels_id_seq');
    found.push({ id: newId, title, created: true });
    specs.push(spec(labels, newId, { type: 'CreateLabel', projectId: input.projectId, fields: { title, color: DEFAULT_LABEL_COLOR } }));
  }
  return { labels: found, specs };
}

const ATTEMPTS = 3;

/**
 * Labels on first use, committed with the issuable: finds or plans the labels
 * (`findOrCreateLabels`), lets `build` make the issuable's specs from them, and commits
 * everything in one transaction — the new labels exist exactly when the issuable's event
 * does. When a concurrent request created one of the labels in between, the title's claim
 * refuses the creation; the labels are looked up again (finding it now) and the whole is
 * retried.
 *
 *   const { labels, results } = await commitWithLabels(w,
 *     { projectId, names: labelNames(params.labels), mayCreate: project.can('admin_label') },
 *     (labels) => [mergeRequests.spec(id, { type: 'CreateMergeRequest', labelIds: labels.map((l) => l.id), … })]);
 */
export async function commitWithLabels(
  w: Writer,
  input: { readonly projectId: number; readonly names: readonly string[]; readonly mayCreate: boolean },
  build: (labels: readonly IssuableLabel[]) => readonly CommandSpec<any, any, any>[] | Promise<readonly CommandSpec<any, any, any>[]>,
): Promise<{ labels: readonly IssuableLabel[]; results: CommandResult<unknown>[] }> {
  for (let attempt = 1; ; attempt++) {
    const planned = await findOrCreateLabels(w.ctx.db, input);
    const raced = conflict('Label already exists');
    const creations = planned.specs.map((spec) => ({ ...spec, claimRefusal: () => raced }));
    const own = await build(planned.labels);
    try {
      const results = await handleCommands(w, [...creations, ...own]);
      return { labels: planned.labels, results: results.slice(creations.length) };
    } catch (error) {
      if (error !== raced || attempt >= ATTEMPTS) throw error;
    }
  }
}
