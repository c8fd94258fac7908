import { execFile, spawnSync } from 'node:child_process';

/** A real GitLab client: python-gitlab (Debian's python3-gitlab 3.12) run by /usr/bin/python3. */
export const PYTHON = '/usr/bin/python3';

const probe = spawnSync(PYTHON, ['-c', 'import gitlab; print(gitlab.__version__)'], { encoding: 'utf8' });
/** Whether python-gitlab can be imported; the client specs are skipped (and say why) otherwise. */
export const pythonGitlabAvailable = probe.status === 0;
export const pythonGitlabVersion = pythonGitlabAvailable ? probe.stdout.trim() : '';

export function warnIfUnavailable(what: string) {
  if (pythonGitlabAvailable) return;
  console.warn(
    `python-gitlab ${what} specs skipped: ${PYTHON} cannot import gitlab (install the Debian package python3-gitlab). ${probe.error?.message ?? probe.stderr.trim()}`,
  );
}

/** Runs a python-gitlab script that prints one JSON document; the environment carries URL and tokens. */
export function runPython(script: string, env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', script], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`python-gitlab failed: ${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout));
    });
  });
}

/**
 * A python-gitlab script around `body`: `env` (os.environ), `out` (the dict printed as JSON at
 * the end) and `gitlab` are at hand, and every warning python-gitlab raises is collected in
 * `out["warnings"]`. The body is written unindented.
 */
export function clientScript(body: string): string {
  const indented = body
    .replace(/^\n+|\s+$/g, '')
    .split('\n')
    .map((line) => (line.trim() === '' ? '' : `    ${line}`))
    .join('\n');
  return `import json, os, warnings
import gitlab

env = os.environ
out = {}
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
${indented}
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out, default=str))
`;
}
