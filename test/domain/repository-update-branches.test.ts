import { describe, it } from 'vitest';
import { repositoryDecider, type RepositoryEvent } from '../../src/domain/repository/decider.js';
import { deciderSpec, rejected } from '../support/decider.js';

const repo = deciderSpec(repositoryDecider);
const PROJECT = 7;
const [A, B, M] = ['a', 'b', 'm'].map((c) => c.repeat(40)) as [string, string, string];
const master: RepositoryEvent = { type: 'BranchCreated', data: { project_id: PROJECT, branch: 'master', new_sha: A, commits: [A], commit_details: [{ message: 'a', author_name: 'A' }] } };
const feature: RepositoryEvent = { type: 'BranchCreated', data: { project_id: PROJECT, branch: 'feature', new_sha: B, commits: [B], commit_details: [{ message: 'b', author_name: 'B' }] } };

describe('UpdateBranches: ref moves decided in order on one stream, all or none', () => {
  it('moves the target and deletes the source of an accepted merge request', () => {
    repo
      .on(PROJECT)
      .given(master, feature)
      .when({ type: 'UpdateBranches', commands: [{ type: 'PushBranch', branch: 'master', oldSha: A, newSha: M, commits: [M], commitDetails: [{ message: 'm', author_name: 'M' }] }, { type: 'DeleteBranch', branch: 'feature' }] })
      .then([
        { type: 'BranchUpdated', data: { project_id: PROJECT, branch: 'master', old_sha: A, new_sha: M, commits: [M], commit_details: [{ message: 'm', author_name: 'M' }] } },
        { type: 'BranchDeleted', data: { project_id: PROJECT, branch: 'feature', old_sha: B } },
      ]);
  });

  it('decides each on the state the earlier ones left, and refuses the whole when one is refused', () => {
    repo
      .on(PROJECT)
      .given(master)
      .when({ type: 'UpdateBranches', commands: [{ type: 'DeleteBranch', branch: 'master' }, { type: 'DeleteBranch', branch: 'master' }] })
      .then(rejected('bad_request', { text: 'No such branch' }));
    repo
      .on(PROJECT)
      .given(master)
      .when({ type: 'UpdateBranches', commands: [{ type: 'PushBranch', branch: 'master', oldSha: B, newSha: M, commits: [M], commitDetails: [{ message: 'm', author_name: 'M' }] }] })
      .then(rejected('conflict', { text: 'Could not update the branch: it was changed meanwhile' }));
    repo.on(PROJECT).given(master).when({ type: 'UpdateBranches', commands: [] }).then([]);
  });
});
