/**
 * postinstall: makes the embedded database's template data directory (src/embedded/template.ts),
 * so a new data directory is a copy instead of PGlite's initdb. Never fails the install: without
 * a template the first new data directory makes it.
 */
import { ensureTemplate, templateDir } from '../src/database/embedded-template.js';

const dir = await ensureTemplate().catch(() => undefined);
console.log(dir ? `forgelog: embedded database template ready in ${dir}` : `forgelog: could not write ${templateDir()}; new embedded databases will run initdb`);
