// The TypeScript sources (src/, migrations/) as JavaScript, compiled once per version of them.
//
// The forgelog command used to run the sources through tsx's loader, which keeps its hooks,
// the sources and their transforms in the server's heap: ~70 MB of resident memory
// (190 MB idle against 121 MB compiled, on PostgreSQL). esbuild — the compiler tsx itself
// uses — transpiles every file (no bundle: the layout, the relative imports and
// src/database/migrate.ts's ../../migrations stay as they are) into
// node_modules/.cache/forgelog/build-<digest of the sources>, so a changed source gets a new
// build at the next start and the build never serves stale code. A build is made in a
// directory of its own and renamed into place, so processes starting together (the tests,
// the bench) share it and never see half of one.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'forgelog');
/** What a build is made of: these directories' .ts files, and the compiler (package-lock.json) and its settings (tsconfig.json). */
const SOURCES = ['src', 'migrations'];
const BUILD_PREFIX = 'build-';
/** Older builds are removed after this long, not at once: a process started on one may still import from it (migrations). */
const OLD_BUILD_MS = 24 * 60 * 60 * 1000;

function sourceFiles(dir, files = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, files);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/**
 * The path of src/cli/main.js in the build of the sources as they are now, built first if
 * missing; undefined when it cannot be built here (node_modules not writable, esbuild
 * missing): the caller then runs the sources through tsx.
 */
export async function compiledMain() {
  let build = CACHE;
  try {
    const files = SOURCES.flatMap((dir) => sourceFiles(join(ROOT, dir))).sort();
    const digest = createHash('sha256');
    digest.update(`${readFileSync(join(ROOT, 'package-lock.json'))}\0${readFileSync(join(ROOT, 'tsconfig.json'))}\0`);
    for (const file of files) digest.update(`${relative(ROOT, file)}\0`).update(readFileSync(file)).update('\0');
    build = join(CACHE, `${BUILD_PREFIX}${digest.digest('hex').slice(0, 16)}`);
    const main = join(build, 'src', 'cli', 'main.js');
    if (existsSync(main)) return main;
    const { build: esbuild } = await import('esbuild');
    mkdirSync(CACHE, { recursive: true });
    const partial = `${build}.${process.pid}.partial`;
    await esbuild({ entryPoints: files, outdir: partial, outbase: ROOT, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
    try {
      renameSync(partial, build);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another process renamed its copy first
    }
    if (!existsSync(main)) throw new Error('the build is not in place');
    removeOldBuilds(build);
    return main;
  } catch (error) {
    process.stderr.write(`forgelog: could not compile the sources into ${build} (${error instanceof Error ? error.message.split('\n')[0] : error}); running them through tsx\n`);
    return undefined;
  }
}

function removeOldBuilds(current) {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (!name.startsWith(BUILD_PREFIX) || path === current) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > OLD_BUILD_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already, or another process is removing it
    }
  }
}
