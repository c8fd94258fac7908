import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';

/**
 * Feature flags of a project (GitLab EE's Operations::FeatureFlag, "legacy" flags of 12.x)
 * and their scopes, the feature flag specs (Operations::FeatureFlagScope): one aggregate per
 * flag, stream `feature-flag-<id>`; the scopes live in their flag's stream.
 */

const strategies = z.array(z.record(z.string(), z.unknown()));
const scope = z.strictObject({ id: z.int(), environment_scope: z.string(), active: z.boolean(), strategies });
/** Every event names its flag as it is then, for the audit feed. */
const ofFlag = { id: z.int(), project_id: z.int(), name: z.string() };

export const featureFlagEvents = {
  FeatureFlagCreated: z.strictObject({ ...ofFlag, description: z.string().nullable(), active: z.boolean(), scopes: z.array(scope) }),
  /** `name` is the new one; `previous` holds the values before of the keys that changed. */
  FeatureFlagUpdated: z.strictObject({
    ...ofFlag,
    changes: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), active: z.boolean().optional() }),
    previous: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), active: z.boolean().optional() }),
  }),
  FeatureFlagDeleted: z.strictObject(ofFlag),
  FeatureFlagScopeCreated: z.strictObject({ ...ofFlag, scope }),
  FeatureFlagScopeUpdated: z.strictObject({
    ...ofFlag,
    scope_id: z.int(),
    environment_scope: z.string(),
    changes: z.strictObject({ active: z.boolean().optional(), strategies: strategies.optional() }),
    previous: z.strictObject({ active: z.boolean().optional(), strategies: strategies.optional() }),
  }),
  FeatureFlagScopeDeleted: z.strictObject({ ...ofFlag, scope_id: z.int(), environment_scope: z.string() }),
} satisfies EventSchemas;

export type FeatureFlagEvent = EventOf<typeof featureFlagEvents>;
export type ScopeData = z.infer<typeof scope>;

export const featureFlagStreamId = (id: number) => `feature-flag-${id}`;

/** GitLab's audit records name the flag as target (Operations::FeatureFlag). */
export const featureFlagEventIndex = (event: FeatureFlagEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'Operations::FeatureFlag',
  targetId: event.data.id,
});
