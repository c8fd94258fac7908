import type { ObjectType } from './objects.js';

/**
 * The git objects an event names by SHA: what `forgelog events verify` looks up in the
 * repository's object store (src/projections/repository/verify.ts). The log's hash chain
 * covers these names; the objects behind them are content-addressed, so each is checked
 * against its name there.
 *
 * Every name is a commit of the event's project: the repository's ref moves (their old and
 * new heads, the commits they brought) and what a merge request recorded of the repository
 * (its versions, its merge, its mergeability checks). A merge request's objects are in its
 * project's repository: a fork's source commits are fetched into it (src/commands/repository-fetch.ts).
 */
export interface NamedObject {
  readonly projectId: number;
  readonly sha: string;
  readonly type: ObjectType;
  /** Where the event names it (`new_sha`, `version.commit_shas[2]`). */
  readonly field: string;
}

type Data = Record<string, unknown>;

const commits = (projectId: number, data: Data, fields: readonly string[], prefix = ''): NamedObject[] =>
  fields.flatMap((field) => {
    const value = data[field];
    if (typeof value === 'string') return [{ projectId, sha: value, type: 'commit' as const, field: `${prefix}${field}` }];
    if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').map((sha, i) => ({ projectId, sha, type: 'commit' as const, field: `${prefix}${field}[${i}]` }));
    return [];
  });

const VERSION_FIELDS = ['head_commit_sha', 'base_commit_sha', 'start_commit_sha', 'commit_shas'] as const;

const NAMED: Readonly<Record<string, (data: Data, projectId: number) => NamedObject[]>> = {
  BranchCreated: (data, project) => commits(project, data, ['new_sha', 'commits']),
  BranchUpdated: (data, project) => commits(project, data, ['old_sha', 'new_sha', 'commits']),
  BranchDeleted: (data, project) => commits(project, data, ['old_sha']),
  // A tag's target is a tag object when annotated (message set), else the commit.
  TagCreated: (data, project) => [
    ...(typeof data.target === 'string' ? [{ projectId: project, sha: data.target, type: data.message === null ? ('commit' as const) : ('tag' as const), field: 'target' }] : []),
    ...commits(project, data, ['commit_sha']),
  ],
  MergeRequestOpened: (data, project) => commits(project, (data.version ?? {}) as Data, VERSION_FIELDS, 'version.'),
  MergeRequestVersionRecorded: (data, project) => commits(project, (data.version ?? {}) as Data, VERSION_FIELDS, 'version.'),
  MergeRequestMerged: (data, project) => commits(project, data, ['merge_commit_sha', 'squash_commit_sha']),
  MergeRequestMergeStatusChecked: (data, project) => commits(project, data, ['source_sha', 'target_sha']),
  MergeRequestMergeRefUpdated: (data, project) => commits(project, data, ['commit_sha', 'target_sha', 'source_sha']),
  // An issue closed by a pushed commit names it in the pushing project (the issue's or another).
  IssueClosed: (data) => {
    const via = data.via_commit as Data | undefined;
    return via !== undefined && typeof via.project_id === 'number' ? commits(via.project_id, via, ['sha'], 'via_commit.') : [];
  },
};

/** Whether events of `type` name objects at all (the others need not be upcast to be asked). */
export const namesObjects = (type: string): boolean => type in NAMED;

/** The objects an event of `type` names (its data in the current schema); none for the types that name none. */
export function objectsNamedBy(type: string, data: unknown): NamedObject[] {
  const named = NAMED[type];
  if (!named || typeof data !== 'object' || data === null) return [];
  const projectId = (data as Data).project_id;
  return typeof projectId === 'number' ? named(data as Data, projectId) : [];
}
