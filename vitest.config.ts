import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/event-types.ts'],
    // Cheap password hashes: the suite creates hundreds of users.
    env: { FORGELOG_PASSWORD_HASH_COST: '10' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', 'json', './test/support/skipped-reporter.ts'],
    outputFile: { json: '.test-data/results.json' },
  },
});
