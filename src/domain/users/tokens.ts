import { invalid } from '../errors.js';
import { isBlank, TOKEN_SCOPES, type TokenScope } from '../users.js';

export interface TokenRecord {
  readonly id: number;
  readonly name: string;
  readonly scopes: readonly TokenScope[];
  readonly expires_at: string | null;
  readonly impersonation: boolean;
  readonly revoked: boolean;
}

/** GitLab's PersonalAccessToken validations: the name's presence, then the scopes' presence and that each is an available scope. */
export function validateToken(name: string, scopes: readonly string[]): asserts scopes is readonly TokenScope[] {
  const errors: Record<string, string[]> = {};
  if (isBlank(name)) errors.name = ["can't be blank"];
  if (scopes.length === 0) errors.scopes = ["can't be blank"];
  else if (!scopes.every((scope) => (TOKEN_SCOPES as readonly string[]).includes(scope))) errors.scopes = ['can only contain available scopes'];
  if (Object.keys(errors).length > 0) throw invalid(errors);
}
