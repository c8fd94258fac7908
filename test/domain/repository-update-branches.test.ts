import { describe, expect, it } from 'vitest';
import { repositoryDecider, type RepositoryEvent } from '../../src/domain/repository/decider.js';
import { refSpecs } from '../../src/commands/repository.js';
import { deciderSpec, rejected } from '../support/decider.js';

const repo = deciderSpec(repositoryDecider);
const PROJECT = 7;
const MASTER = { projectId: PROJECT, ref: 'refs/heads/master' };
const [A, B, M] = ['a', 'b', 'm'].map((c) => c.repeat(40)) as [string, string, string];
const detail = (message: string) => [{ message, author_name: 'A', author_id: null }];
const master: RepositoryEvent = { type: 'BranchCreated', data: { project_id: PROJECT, branch: 'master', new_sha: A, commits: [A], commit_details: detail('a'), commit_count: 1 } };

describe('UpdateRefs: ref writes in order, all or none', () => {
  it('splits into one command per ref, in the order the refs first appear (each ref is its own stream)', () => {
    const push = { type: 'PushBranch' as const, branch: 'master', oldSha: A, newSha: M, commits: [M], commitDetails: detail('m') };
    const specs = refSpecs(PROJECT, { type: 'UpdateRefs', commands: [push, { type: 'DeleteBranch', branch: 'feature' }, { type: 'DeleteTag', tag: 'v1' }, { type: 'CreateTag', tag: 'v1', target: M, commitSha: M, message: null, commitDetails: detail('m'), releaseDescription: null }] });
    expect(specs.map((s) => s.streamId)).toEqual(['repository-7:refs/heads/master', 'repository-7:refs/heads/feature', 'repository-7:refs/tags/v1']);
    expect(specs.map((s) => s.predecessor)).toEqual(['repository-7', 'repository-7', 'repository-7']);
    expect(specs[0]!.command).toEqual(push);
    expect((specs[2]!.command as { type: string; commands: unknown[] }).commands).toHaveLength(2);
  });

  it('decides the writes of one ref on the state the earlier ones left, and refuses the whole when one is refused', () => {
    repo
      .on(MASTER)
      .given(master)
      .when({ type: 'UpdateRefs', commands: [{ type: 'DeleteBranch', branch: 'master' }, { type: 'CreateBranch', branch: 'master', sha: B, commits: [], commitDetails: [] }] })
      .then([
        { type: 'BranchDeleted', data: { project_id: PROJECT, branch: 'master', old_sha: A } },
        { type: 'BranchCreated', data: { project_id: PROJECT, branch: 'master', new_sha: B, commits: [], commit_details: [], commit_count: 0 } },
      ]);
    repo
      .on(MASTER)
      .given(master)
      .when({ type: 'UpdateRefs', commands: [{ type: 'DeleteBranch', branch: 'master' }, { type: 'DeleteBranch', branch: 'master' }] })
      .then(rejected('bad_request', { text: 'No such branch' }));
    repo
      .on(MASTER)
      .given(master)
      .when({ type: 'UpdateRefs', commands: [{ type: 'PushBranch', branch: 'master', oldSha: B, newSha: M, commits: [M], commitDetails: detail('m') }] })
      .then(rejected('conflict', { text: 'Could not update the branch: it was changed meanwhile' }));
    repo.on(MASTER).given(master).when({ type: 'UpdateRefs', commands: [] }).then([]);
  });
});
