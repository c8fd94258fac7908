import { environmentsProjector } from './environments/projector.js';
import { featureFlagsProjector } from './feature-flags/projector.js';
import { epicsProjector } from './epics/projector.js';
import { labelsProjector } from './labels/projector.js';
import { mergeRequestsProjector } from './merge-requests/projector.js';
import { issuesProjector } from './issues/projector.js';
import { milestonesProjector } from './milestones/projector.js';
import { todosProjector } from './todos/projector.js';
import { broadcastMessagesProjector } from './broadcast-messages/projector.js';
import { deployKeysProjector } from './deploy-keys/projector.js';
import { userSshKeysProjector } from './user-ssh-keys/projector.js';
import { applicationSettingsProjector } from './application-settings/projector.js';
import { authorizationsProjector } from './authorizations/projector.js';
import { groupsProjector } from './groups/projector.js';
import { integrationsProjector } from './integrations/projector.js';
import { hooksProjector } from './hooks/projector.js';
import { membersProjector } from './members/projector.js';
import { notificationSettingsProjector } from './notification-settings/projector.js';
import { notesProjector } from './notes/projector.js';
import { awardEmojiProjector } from './award-emoji/projector.js';
import type { Projector } from './projector.js';
import { projectsProjector } from './projects/projector.js';
import { protectedBranchesProjector } from './protected-branches/projector.js';
import { protectedTagsProjector } from './protected-tags/projector.js';
import { usersProjector } from './users.js';
import { scimProjector } from './scim/projector.js';
import { geoNodesProjector } from './geo-nodes/projector.js';
import { containerRepositoriesProjector } from './container-repositories/projector.js';
import { repositoryProjector } from './repository/projector.js';
import { snippetsProjector } from './snippets/projector.js';
import { boardsProjector } from './boards/projector.js';
import { issueLinksProjector } from './issue-links/projector.js';
import { epicIssuesProjector } from './epics/issues-projector.js';
import { crossReferencesProjector } from './cross-references/projector.js';

/**
 * Every projector, in the order they apply an event: projects after groups (renames read the
 * renamed rows), authorizations after members, groups and projects (it recomputes from their rows).
 */
export const PROJECTORS: readonly Projector[] = [usersProjector, groupsProjector, membersProjector, projectsProjector, authorizationsProjector, environmentsProjector, broadcastMessagesProjector, deployKeysProjector, userSshKeysProjector, notificationSettingsProjector, protectedBranchesProjector, protectedTagsProjector, applicationSettingsProjector, integrationsProjector, hooksProjector, featureFlagsProjector, scimProjector, geoNodesProjector, epicsProjector, containerRepositoriesProjector, milestonesProjector, labelsProjector, repositoryProjector, mergeRequestsProjector, issuesProjector, todosProjector, snippetsProjector, notesProjector, awardEmojiProjector, boardsProjector, issueLinksProjector, epicIssuesProjector, crossReferencesProjector];

export const inlineProjectors = () => PROJECTORS.filter((p) => p.mode === 'inline');
export const asyncProjectors = () => PROJECTORS.filter((p) => p.mode === 'async');
