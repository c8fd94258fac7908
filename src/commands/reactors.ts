import { groupRemovalReactor } from './groups.js';
import { integrationDeliveries } from './integration-deliveries.js';
import { integrationSecretsRemovalReactor } from './integrations.js';
import { projectRemovalReactor } from './projects.js';
import { scimUserRemovalReactor } from './scim.js';
import { containerRepositoryReactor } from './container-repositories.js';
import { mergeRequestTodosReactor } from './merge-request-todos.js';
import { mergeRequestRefreshReactor } from './merge-request-merge.js';
import type { Reactor } from './kernel/reactor.js';

/** Every reactor: async subscribers that issue commands (asynchronous removals, fan-out). */
export const REACTORS: readonly Reactor[] = [groupRemovalReactor, projectRemovalReactor, integrationSecretsRemovalReactor, scimUserRemovalReactor, integrationDeliveries, containerRepositoryReactor, mergeRequestRefreshReactor, mergeRequestTodosReactor];
