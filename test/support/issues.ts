import { expect } from 'vitest';
import { addMember } from './fixtures.js';
import { createCallers, sourceWithRoles, type Callers } from './roles.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

export interface IssueUser {
  readonly id: number;
  readonly username: string;
  readonly token: string;
}

export type IssueVisibility = 'private' | 'internal' | 'public';

/**
 * A server with the member roles on a private, an internal and a public project (each in a
 * group of the owner), and an issue author and assignee who are guests of all three: what
 * the issue endpoint tests share.
 */
export interface IssueWorld {
  readonly api: TestServer;
  readonly callers: Callers;
  readonly author: IssueUser;
  readonly assignee: IssueUser;
  readonly projects: Readonly<Record<IssueVisibility, number>>;
  /** An issue by the author (assigned to the assignee when a reporter or more creates it); its iid. */
  issue(projectId: number, body?: Record<string, unknown>, token?: string | null): Promise<number>;
}

export async function startIssueWorld(options: TestServerOptions = {}): Promise<IssueWorld> {
  const api = await startTestServer({}, options);
  const callers = await createCallers(api);
  const a = await api.createUser({ username: 'issue-author', name: 'Issue Author' });
  const b = await api.createUser({ username: 'issue-assignee', name: 'Issue Assignee' });
  const author = { id: a.user.id, username: a.user.username, token: a.token };
  const assignee = { id: b.user.id, username: b.user.username, token: b.token };
  const projects = {} as Record<IssueVisibility, number>;
  for (const visibility of ['private', 'internal', 'public'] as const) {
    projects[visibility] = await sourceWithRoles(api, callers, 'projects', visibility);
    await addMember(api, 'projects', projects[visibility], author.id, 10);
    await addMember(api, 'projects', projects[visibility], assignee.id, 10);
  }
  const issue = async (projectId: number, body: Record<string, unknown> = {}, token: string | null = author.token) => {
    const created = await api.post(`/projects/${projectId}/issues`, { title: 'An issue', ...body }, { token });
    expect(created.status, created.text).toBe(201);
    return created.body.iid as number;
  };
  return { api, callers, author, assignee, projects, issue };
}
