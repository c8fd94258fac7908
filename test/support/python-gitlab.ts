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
