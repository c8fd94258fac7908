import type { FeatureFlagEvent, ScopeData } from './events.js';

/**
 * The `custom_message` GitLab EE 12's FeatureFlags::CreateService, UpdateService and
 * DestroyService record as a project's audit event (FeatureFlags::BaseService#audit_event),
 * word for word, HTML included.
 */

/** Ruby's #inspect of a value read from JSON (strategies are shown that way: `[{"name"=>"default", "parameters"=>{}}]`). */
export function rubyInspect(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value).replace(/#(?=[{$@])/g, '\\#');
  if (Array.isArray(value)) return `[${value.map(rubyInspect).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${rubyInspect(k)}=>${rubyInspect(v)}`).join(', ')}}`;
  return String(value);
}

/** Ruby's "#{value}": nil is empty. */
const interpolated = (value: unknown) => (value === null || value === undefined ? '' : typeof value === 'object' ? rubyInspect(value) : String(value));

const createdRule = (scope: ScopeData) =>
  `Created rule <strong>${scope.environment_scope}</strong> and set it as <strong>${scope.active ? 'active' : 'inactive'}</strong> with strategies <strong>${rubyInspect(scope.strategies)}</strong>.`;

const updated = (name: string, changes: readonly string[]) => `Updated feature flag <strong>${name}</strong>. ${changes.join(' ')}`;

/** UpdateService::AUDITABLE_SCOPE_ATTRIBUTES_HUMAN_NAMES, in its order. */
const SCOPE_ATTRIBUTES = [
  ['active', 'active state'],
  ['strategies', 'strategies'],
] as const;

export function featureFlagAuditMessage(event: FeatureFlagEvent): string {
  switch (event.type) {
    case 'FeatureFlagCreated': {
      const { name, description, scopes } = event.data;
      return [`Created feature flag <strong>${name}</strong>`, `with description <strong>"${interpolated(description)}"</strong>.`, ...scopes.map(createdRule)].join(' ');
    }
    case 'FeatureFlagUpdated': {
      const { name, changes, previous } = event.data;
      // AUDITABLE_ATTRIBUTES: name, description, active.
      const messages = (['name', 'description', 'active'] as const)
        .filter((key) => changes[key] !== undefined)
        .map((key) => `Updated ${key} from <strong>"${interpolated(previous[key])}"</strong> to <strong>"${interpolated(changes[key])}"</strong>.`);
      return updated(name, messages);
    }
    case 'FeatureFlagDeleted':
      return `Deleted feature flag <strong>${event.data.name}</strong>.`;
    case 'FeatureFlagScopeCreated':
      return updated(event.data.name, [createdRule(event.data.scope)]);
    case 'FeatureFlagScopeUpdated': {
      const { name, environment_scope, changes, previous } = event.data;
      const parts = SCOPE_ATTRIBUTES.filter(([key]) => changes[key] !== undefined).map(
        ([key, human]) => `${human} from <strong>${interpolated(previous[key])}</strong> to <strong>${interpolated(changes[key])}</strong>`,
      );
      return updated(name, [`Updated rule <strong>${environment_scope}</strong> ${parts.join(' ')}.`]);
    }
    case 'FeatureFlagScopeDeleted':
      return updated(event.data.name, [`Deleted rule <strong>${event.data.environment_scope}</strong>.`]);
  }
}
