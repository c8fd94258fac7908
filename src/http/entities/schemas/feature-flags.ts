import { arrayOf, bool, dateTime, entity, extend, hash, int, nullable, object, ref, str } from './dsl.js';

export const FeatureFlagScope = entity("EE's Entities::FeatureFlag::Scope.", {
  id: int,
  active: bool,
  environment_scope: str,
  strategies: arrayOf(object({ name: str, parameters: hash })),
  created_at: dateTime,
  updated_at: dateTime,
});


export const DetailedFeatureFlagScope = extend(FeatureFlagScope, "EE's Entities::FeatureFlag::DetailedScope: a scope and its flag's name (`active` only while the flag is).", { name: str });

export const FeatureFlag = entity("EE's Entities::FeatureFlag.", {
  name: str,
  description: nullable(str),
  created_at: dateTime,
  updated_at: dateTime,
  scopes: arrayOf(ref('FeatureFlagScope')),
});
