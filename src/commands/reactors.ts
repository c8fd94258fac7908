import { groupRemovalReactor } from './groups.js';
import { integrationDeliveries } from './integration-deliveries.js';
import { integrationSecretsRemovalReactor } from './integrations.js';
import { hookDeliveries } from './hook-deliveries.js';
import { hookSecretsRemovalReactor } from './hooks.js';
import { projectRemovalReactor } from './projects.js';
import { userSshKeyRemovalReactor } from './user-ssh-keys.js';
import { scimUserRemovalReactor } from './scim.js';
import { containerRepositoryReactor } from './container-repositories.js';
import { mergeRequestTodosReactor } from './merge-request-todos.js';
import { issueTodosReactor } from './issue-todos.js';
import { issueClosingReactor } from './issue-closing.js';
import { noteTodosReactor } from './notes.js';
import { mergeRequestRefreshReactor } from './merge-request-merge.js';
import type { Reactor } from './kernel/reactor.js';

/** Every reactor: async subscribers that issue commands (asynchronous removals, fan-out). */
export const REACTORS: readonly Reactor[] = [groupRemovalReactor, projectRemovalReactor, userSshKeyRemovalReactor, integrationSecretsRemovalReactor, scimUserRemovalReactor, integrationDeliveries, hookDeliveries, hookSecretsRemovalReactor, containerRepositoryReactor, mergeRequestRefreshReactor, mergeRequestTodosReactor, issueTodosReactor, issueClosingReactor, noteTodosReactor];
