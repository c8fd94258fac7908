import { membersProjector } from './members.js';
import { namespacesProjector } from './namespaces.js';
import type { Projector } from './projector.js';
import { usersProjector } from './users.js';

/** Every projector, in the order they apply an event. */
export const PROJECTORS: readonly Projector[] = [usersProjector, namespacesProjector, membersProjector];

export const inlineProjectors = () => PROJECTORS.filter((p) => p.mode === 'inline');
export const asyncProjectors = () => PROJECTORS.filter((p) => p.mode === 'async');
