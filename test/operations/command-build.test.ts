import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The forgelog command runs the sources compiled (bin/compile.js), not through tsx's loader:
 * the other CLI tests start it and so run the build, migrations included; this one checks it
 * is the build they run, and that it is made once per version of the sources.
 */
const compiledMain = () =>
  execFileSync(process.execPath, ['--input-type=module', '-e', "const { compiledMain } = await import('./bin/compile.js'); console.log((await compiledMain()) ?? 'none')"], { encoding: 'utf8' }).trim();

describe('the command build', () => {
  it('compiles src/ and migrations/ into one build per version of them, found again at the next start', () => {
    const main = compiledMain();
    expect(main).toMatch(/node_modules\/\.cache\/forgelog\/build-[0-9a-f]{16}\/src\/cli\/main\.js$/);
    expect(existsSync(main)).toBe(true);
    const build = resolve(main, '..', '..', '..');
    for (const migration of readdirSync('migrations').filter((f) => f.endsWith('.ts'))) {
      expect(existsSync(join(build, 'migrations', migration.replace(/\.ts$/, '.js'))), migration).toBe(true);
    }
    expect(compiledMain()).toBe(main);
  });
});
