/**
 * Image paths as the registry names them (`group/project[/name]`), read the way GitLab's
 * ContainerRegistry::Path reads them, and the Docker distribution grammar of names and tags.
 */

/** Namespace::NUMBER_OF_ANCESTORS_ALLOWED: a path has more than one node and fewer than this. */
const MAX_NODES = 20;

/** distribution/reference: a path component is lower-case alphanumerics joined by `.`, `_`, `__` or runs of `-`. */
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** distribution/reference: a tag is a word character then up to 127 word characters, `.` or `-`. */
const TAG = /^\w[\w.-]{0,127}$/;
/** distribution/reference: `algorithm:hex`. */
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;

export const isImagePath = (path: string) => {
  const nodes = path.split('/');
  return nodes.length > 1 && nodes.length < MAX_NODES && nodes.every((node) => COMPONENT.test(node));
};
export const isTagName = (tag: string) => TAG.test(tag);
export const isDigest = (digest: string) => DIGEST.test(digest);

/**
 * The project paths an image path may belong to, longest first: the whole path and the path
 * less one or two nodes, none shorter than two nodes (ContainerRegistry::Path#components,
 * of which GitLab looks up the first three).
 */
export function projectPathCandidates(path: string): string[] {
  const nodes = path.split('/');
  const candidates: string[] = [];
  for (let length = nodes.length; length >= 2 && candidates.length < 3; length--) candidates.push(nodes.slice(0, length).join('/'));
  return candidates;
}

/** The repository's name within its project: what follows the project's path ('' for the project's root image). */
export const repositoryName = (path: string, projectPath: string) => path.slice(projectPath.length).replace(/^\//, '');
