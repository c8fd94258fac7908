import { describe, expect, it } from 'vitest';
import { type IssueLinkEvent, issueLinkClaims, issueLinkDecider } from '../../src/domain/issue-links.js';
import { deciderSpec, rejected } from '../support/decider.js';

const link = deciderSpec(issueLinkDecider);
const ID = 5;
const source = { issueId: 10, projectId: 1 };
const target = { issueId: 20, projectId: 2 };
const data = { id: ID, source_id: 10, source_project_id: 1, target_id: 20, target_project_id: 2 };
const created: IssueLinkEvent = { type: 'IssueLinkCreated', data };
const deleted: IssueLinkEvent = { type: 'IssueLinkDeleted', data };

describe('the issue link decider', () => {
  it('links a source and a target issue', () => {
    link.on(ID).given().when({ type: 'CreateIssueLink', source, target }).then([created]);
  });

  it('refuses an issue linked to itself as GitLab answers it: 404 Not found', () => {
    link.on(ID).given().when({ type: 'CreateIssueLink', source, target: source }).then(rejected('not_found', { record: true }));
  });

  it('deletes a link once; an unknown or deleted link is not found', () => {
    link.on(ID).given(created).when({ type: 'DeleteIssueLink' }).then([deleted]);
    link.on(ID).given(created, deleted).when({ type: 'DeleteIssueLink' }).then(rejected('not_found', { record: true }));
    link.on(ID).given().when({ type: 'DeleteIssueLink' }).then(rejected('not_found', { record: true }));
  });
});

describe('the issue link claims', () => {
  it('claim the unordered pair on creation and give it back on deletion', () => {
    const reversed: IssueLinkEvent = { type: 'IssueLinkCreated', data: { ...data, source_id: 20, target_id: 10 } };
    expect(issueLinkClaims(created).acquire.map((c) => c.key)).toEqual(['10/20']);
    expect(issueLinkClaims(reversed).acquire.map((c) => c.key)).toEqual(['10/20']);
    expect(issueLinkClaims(created).acquire[0]!.conflictMessage).toBe('Issue(s) already assigned');
    expect(issueLinkClaims(deleted)).toEqual({ acquire: [], release: [expect.objectContaining({ kind: 'issue_link_pair', key: '10/20' })] });
  });
});
