import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { createCallers, grantRoles, type Callers } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * POST /projects with `initialize_with_readme`: the README's commit creates the default branch
 * through the same ref write as a first push (src/commands/repository.ts, `refWrites`), so the
 * branch gets `default_branch_protection` from the application settings as a first push
 * gives it (GitLab 12: 0 none, 1 developers can push, 2 maintainers only; merges by
 * maintainers).
 */

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(async () => {
  await api.put('/application/settings', { default_branch_protection: 2 });
  await api.close();
});

const commitAs = (projectId: number, token: string, file: string) =>
  api.post(`/projects/${projectId}/repository/commits`, { branch: 'master', commit_message: file, actions: [{ action: 'create', file_path: file, content: file }] }, { token });

describe('POST /projects with initialize_with_readme: default_branch_protection', () => {
  const cases = [
    { level: 0, protectedBranches: [], developerPushes: true },
    { level: 1, protectedBranches: [{ name: 'master', push: 30, merge: 40 }], developerPushes: true },
    { level: 2, protectedBranches: [{ name: 'master', push: 40, merge: 40 }], developerPushes: false },
  ];
  for (const { level, protectedBranches, developerPushes } of cases) {
    it(`level ${level}: the README's default branch is protected as a first push protects it`, async () => {
      expect((await api.put('/application/settings', { default_branch_protection: level })).status).toBe(200);
      // Created by a user who is no admin: the protection needs no authorization of its own.
      const made = await createProject(api, { token: callers.nonMember.token!, initialize_with_readme: true });
      await grantRoles(api, callers, { projects: made.id });
      const project = (await api.get(`/projects/${made.id}`)).body;
      expect(project.default_branch).toBe('master');
      const listed = await api.get(`/projects/${made.id}/protected_branches`);
      expect(listed.status).toBe(200);
      expect(listed.body.map((b: any) => ({ name: b.name, push: b.push_access_levels[0].access_level, merge: b.merge_access_levels[0].access_level }))).toEqual(protectedBranches);
      // The same events as a first push's protection: ProtectedBranchCreated in the project's write.
      const events = await api.events(`repository-${made.id}:refs/heads/master`);
      expect(events.map((e) => e.type)).toEqual(['BranchCreated']);
      const branch = (await api.get(`/projects/${made.id}/repository/branches/master`, { token: callers.developer.token! })).body;
      expect(branch).toMatchObject({ name: 'master', protected: level !== 0, developers_can_push: level === 1, developers_can_merge: false, can_push: developerPushes });
      const developer = await commitAs(made.id, callers.developer.token!, 'dev.txt');
      expect(developer.status).toBe(developerPushes ? 201 : 403);
      expect((await commitAs(made.id, callers.maintainer.token!, 'maintainer.txt')).status).toBe(201);
    });
  }
});
