import { installEventTypes } from '../../src/commands/kernel/aggregates.js';

// The test kit's composition root (vitest setupFiles): how each event type is upcast and
// checked, as openRuntime and the CLI install it, for tests that read the log directly.
installEventTypes();
