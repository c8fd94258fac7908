import type { Db } from '../../database/database.js';
import { issueStreamId } from '../../domain/issues/events.js';
import { projectReferenceBase } from '../../domain/notes/cross-references.js';
import { ISSUE_SYSTEM_NOTE_EVENT_TYPES, issueSystemNoteIds, issueSystemNotes } from '../../domain/notes/issue-system-notes.js';
import { readIssuableHistory } from '../issuable-history.js';
import { systemNoteView, type NoteView } from './queries.js';

const namespaceOf = (path: string) => path.slice(0, path.lastIndexOf('/'));

/** The system notes of an issue, from its stream in the log (src/domain/notes/issue-system-notes.ts), with the facts they name looked up. */
export async function issueSystemNoteViews(db: Db, issue: { id: number; iid: number; project_id: number }): Promise<NoteView[]> {
  const stream = await readIssuableHistory(db, issueStreamId(issue.id), ISSUE_SYSTEM_NOTE_EVENT_TYPES);
  const ids = issueSystemNoteIds(stream);
  const [users, milestones, issues, project, epics, commitProjects] = await Promise.all([
    ids.users.size > 0 ? db.selectFrom('users').select(['id', 'username']).where('id', 'in', [...ids.users]).execute() : [],
    ids.milestones.size > 0 ? db.selectFrom('milestones').select(['id', 'iid']).where('id', 'in', [...ids.milestones]).execute() : [],
    ids.issues.size > 0
      ? db.selectFrom('issues').innerJoin('projects', 'projects.id', 'issues.project_id').select(['issues.id', 'issues.iid', 'issues.project_id', 'projects.path_with_namespace']).where('issues.id', 'in', [...ids.issues]).execute()
      : [],
    db.selectFrom('projects').select(['path_with_namespace', 'namespace_id']).where('id', '=', issue.project_id).executeTakeFirst(),
    ids.epics.size > 0
      ? db.selectFrom('epics').innerJoin('namespaces', 'namespaces.id', 'epics.group_id').select(['epics.id', 'epics.iid', 'epics.group_id', 'namespaces.full_path']).where('epics.id', 'in', [...ids.epics]).execute()
      : [],
    ids.projects.size > 0 ? db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', 'in', [...ids.projects]).execute() : [],
  ]);
  const commitProjectPaths = new Map(commitProjects.map((p) => [p.id, p.path_with_namespace]));
  const epicMap = new Map(epics.map((e) => [e.id, e]));
  const usernames = new Map(users.map((u) => [u.id, u.username]));
  const milestoneIids = new Map(milestones.map((m) => [m.id, m.iid]));
  const issueMap = new Map(issues.map((i) => [i.id, i]));
  const from = project?.path_with_namespace ?? '';
  const notes = issueSystemNotes(stream, {
    username: (id) => usernames.get(id) ?? 'ghost',
    milestoneReference: (id) => `%${milestoneIids.get(id) ?? ''}`,
    // Issue#to_reference(project) through Project#to_reference_base.
    issueReference: (id) => {
      const other = issueMap.get(id);
      if (!other) return '#0';
      if (other.project_id === issue.project_id) return `#${other.iid}`;
      const path = other.path_with_namespace;
      return namespaceOf(path) === namespaceOf(from) ? `${path.slice(path.lastIndexOf('/') + 1)}#${other.iid}` : `${path}#${other.iid}`;
    },
    // Epic#to_reference(project): bare for a project directly in the epic's group (group.projects).
    epicReference: (id) => {
      const epic = epicMap.get(id);
      if (!epic) return null;
      return epic.group_id === project?.namespace_id ? `&${epic.iid}` : `${epic.full_path}&${epic.iid}`;
    },
    // Commit#to_reference(project): the SHA alone in the same project (a project since deleted: its SHA).
    commitReference: (projectId, sha) => {
      const base = projectId === issue.project_id ? '' : projectReferenceBase(commitProjectPaths.get(projectId) ?? from, from);
      return base === '' ? sha : `${base}@${sha}`;
    },
  });
  return notes.map((n) => systemNoteView(n, 'Issue', issue));
}
