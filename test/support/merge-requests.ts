import { expect } from 'vitest';
import { addMember, createGroup } from './fixtures.js';
import { createCallers, grantRoles, type Callers } from './roles.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

export interface MergeRequestUser {
  readonly id: number;
  readonly username: string;
  readonly token: string;
}

/**
 * A server with the member roles on a private and a public project (each in a group of the
 * owner, with a README on master), and a merge request author and assignee who are
 * developers of both: what the merge request endpoint tests share.
 */
export interface MergeRequestWorld {
  readonly api: TestServer;
  readonly callers: Callers;
  readonly author: MergeRequestUser;
  readonly assignee: MergeRequestUser;
  readonly projects: Readonly<Record<'private' | 'public', number>>;
  /** A merge request by the author, assigned to the assignee, from a new branch with one commit; its iid. */
  mergeRequest(projectId: number, title?: string): Promise<number>;
}

export async function startMergeRequestWorld(options: TestServerOptions = {}): Promise<MergeRequestWorld> {
  const api = await startTestServer({}, options);
  const callers = await createCallers(api);
  const a = await api.createUser({ username: 'mr-author', name: 'Mr Author' });
  const b = await api.createUser({ username: 'mr-assignee', name: 'Mr Assignee' });
  const author = { id: a.user.id, username: a.user.username, token: a.token };
  const assignee = { id: b.user.id, username: b.user.username, token: b.token };

  const projectWithBranch = async (visibility: 'private' | 'public') => {
    const group = await createGroup(api, { token: callers.owner.token!, visibility });
    const created = await api.post('/projects', { name: `mrs-${visibility}`, namespace_id: group.id, visibility, initialize_with_readme: true }, { token: callers.owner.token });
    expect(created.status).toBe(201);
    const project = created.body;
    await grantRoles(api, callers, { projects: project.id });
    await addMember(api, 'projects', project.id, author.id, 30);
    await addMember(api, 'projects', project.id, assignee.id, 30);
    return project.id as number;
  };
  const projects = { private: await projectWithBranch('private'), public: await projectWithBranch('public') };

  let branches = 0;
  const mergeRequest = async (projectId: number, title = 'Add a') => {
    const branch = `feature-${++branches}`;
    const commit = await api.post(`/projects/${projectId}/repository/commits`, {
      branch,
      start_branch: 'master',
      commit_message: title,
      actions: [{ action: 'create', file_path: `${branch}.txt`, content: 'a\n' }],
    });
    expect(commit.status).toBe(201);
    const created = await api.post(`/projects/${projectId}/merge_requests`, { title, source_branch: branch, target_branch: 'master', assignee_ids: [assignee.id] }, { token: author.token });
    expect(created.status).toBe(201);
    return created.body.iid as number;
  };
  return { api, callers, author, assignee, projects, mergeRequest };
}
