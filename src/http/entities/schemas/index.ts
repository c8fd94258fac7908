import type { JsonSchema } from '../../kernel/params.js';
import * as applicationSettings from './application-settings.js';
import * as auditEvents from './audit-events.js';
import * as awardEmoji from './award-emoji.js';
import * as boards from './boards.js';
import * as broadcastMessages from './broadcast-messages.js';
import * as containerRepositories from './container-repositories.js';
import * as deployKeys from './deploy-keys.js';
import * as environments from './environments.js';
import * as epics from './epics.js';
import * as events from './events.js';
import * as featureFlags from './feature-flags.js';
import * as geoNodes from './geo-nodes.js';
import * as groups from './groups.js';
import * as hooks from './hooks.js';
import * as integrations from './integrations.js';
import * as issueLinks from './issue-links.js';
import * as issues from './issues.js';
import * as labels from './labels.js';
import * as members from './members.js';
import * as mergeRequestVersions from './merge-request-versions.js';
import * as mergeRequests from './merge-requests.js';
import * as milestones from './milestones.js';
import * as notes from './notes.js';
import * as notificationSettings from './notification-settings.js';
import * as projects from './projects.js';
import * as protectedBranches from './protected-branches.js';
import * as repository from './repository.js';
import * as repositoryDiffs from './repository-diffs.js';
import * as resourceEvents from './resource-events.js';
import * as snippets from './snippets.js';
import * as todos from './todos.js';
import * as userSshKeys from './user-ssh-keys.js';
import * as users from './users.js';

/**
 * The JSON Schema of every GitLab entity the API answers with, by its name in
 * `documented({ responses: { 200: 'Milestone[]' } })` — the OpenAPI document's
 * `components.schemas`. Written beside the entity functions (src/http/entities/*.ts), one
 * file per area; test/http/openapi-answers.test.ts validates real answers against them.
 */
export const ENTITY_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  ...applicationSettings,
  ...auditEvents,
  ...awardEmoji,
  ...boards,
  ...broadcastMessages,
  ...containerRepositories,
  ...deployKeys,
  ...environments,
  ...epics,
  ...events,
  ...featureFlags,
  ...geoNodes,
  ...groups,
  ...hooks,
  ...integrations,
  ...issueLinks,
  ...issues,
  ...labels,
  ...members,
  ...mergeRequestVersions,
  ...mergeRequests,
  ...milestones,
  ...notes,
  ...notificationSettings,
  ...projects,
  ...protectedBranches,
  ...repository,
  ...repositoryDiffs,
  ...resourceEvents,
  ...snippets,
  ...todos,
  ...userSshKeys,
  ...users,
};
