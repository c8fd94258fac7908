import { describe, expect, it } from 'vitest';
import { LICENSED_FEATURES, PLANS, licensed, type LicensedFeature, type Plan } from '../../src/domain/policy/licensed.js';

/** Which features each plan has (GitLab EE's EES/EEP/EEU_FEATURES, 12.10; free is CE). */
const LICENSED_TABLE: Record<Plan, readonly LicensedFeature[]> = {
  free: [],
  starter: ['ee', 'audit_events', 'merge_request_approvers', 'multiple_merge_request_assignees', 'repository_mirrors', 'protected_refs_for_users', 'jenkins_integration', 'group_webhooks', 'issue_weights', 'multiple_issue_assignees', 'multiple_project_issue_boards', 'scoped_issue_board', 'wip_limits', 'related_issues'],
  premium: [
    'ee', 'audit_events', 'admin_audit_log', 'merge_request_approvers', 'multiple_merge_request_assignees', 'repository_mirrors', 'protected_refs_for_users', 'adjourned_deletion_for_projects_and_groups',
    'group_webhooks', 'issue_weights', 'multiple_issue_assignees', 'multiple_project_issue_boards', 'scoped_issue_board', 'wip_limits', 'related_issues',
    'code_owner_approval_required', 'custom_file_templates_for_namespace', 'external_authorization_service_api_management', 'packages',
    'protected_environments', 'service_desk', 'feature_flags',
    'check_namespace_plan', 'custom_file_templates', 'elastic_search', 'email_additional_text', 'geo', 'ldap_group_sync_filter',
    'jenkins_integration', 'github_project_service_integration',
    'group_saml', 'default_project_deletion_protection',
  ],
  ultimate: [
    'ee', 'audit_events', 'admin_audit_log', 'merge_request_approvers', 'multiple_merge_request_assignees', 'repository_mirrors', 'protected_refs_for_users', 'adjourned_deletion_for_projects_and_groups',
    'group_webhooks', 'issue_weights', 'multiple_issue_assignees', 'multiple_project_issue_boards', 'scoped_issue_board', 'wip_limits', 'related_issues',
    'code_owner_approval_required', 'custom_file_templates_for_namespace', 'external_authorization_service_api_management', 'packages',
    'protected_environments', 'service_desk', 'feature_flags',
    'check_namespace_plan', 'custom_file_templates', 'elastic_search', 'email_additional_text', 'geo', 'ldap_group_sync_filter', 'epics',
    'jenkins_integration', 'github_project_service_integration',
    'group_saml', 'default_project_deletion_protection', 'personal_access_token_expiration_policy', 'pseudonymizer',
  ],
};

describe('licensed', () => {
  it.each(PLANS)('answers the features of %s', (plan) => {
    const features = Object.keys(LICENSED_FEATURES) as LicensedFeature[];
    expect(features.filter((feature) => licensed(plan, feature)).sort()).toEqual([...LICENSED_TABLE[plan]].sort());
  });
});
