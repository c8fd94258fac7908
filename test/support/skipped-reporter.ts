import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** The mark `describeOnPostgres` / `itOnPostgres` (database.ts) put in a test's name. */
export const POSTGRES_ONLY = '[PostgreSQL only]';

/**
 * Says aloud, after the summary, how many tests were skipped and why: a run on the embedded
 * database skips the tests that need a PostgreSQL server (concurrency, advisory locks,
 * NOTIFY across processes, connection faults), and a green run must not hide that.
 */
export default class SkippedReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const skipped: TestCase[] = [];
    for (const module of modules) for (const test of module.children.allTests()) if (test.result().state === 'skipped') skipped.push(test);
    if (skipped.length === 0) return;
    const postgres = skipped.filter((t) => t.fullName.includes(POSTGRES_ONLY));
    const other = skipped.filter((t) => !t.fullName.includes(POSTGRES_ONLY));
    const lines = [`\n${skipped.length} tests SKIPPED:`];
    if (postgres.length > 0) {
      lines.push(`  ${postgres.length} need PostgreSQL — run them with DATABASE_URL=postgres://… npm test (README.md, "Test it")`);
    }
    if (other.length > 0) {
      const files = [...new Set(other.map((t) => t.module.relativeModuleId))];
      lines.push(`  ${other.length} others, in ${files.join(', ')} (each says why on stderr)`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
