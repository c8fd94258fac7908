import { serviceError } from '../errors.js';
import { blob, type GitObject, type Mode, MODES, tree, type TreeEntry } from './objects.js';

/**
 * A commit's files as a flat map (path → mode and blob), the actions of
 * `POST /projects/:id/repository/commits` applied to it, and the trees git writes for it.
 * Messages are GitLab 12's Files::MultiService ones (rendered as `{"message": …}`, 400).
 */

export interface FileEntry {
  readonly mode: Mode;
  readonly sha: string;
}

export type FileMap = ReadonlyMap<string, FileEntry>;

export const ACTIONS = ['create', 'update', 'delete', 'move', 'chmod'] as const;
export type ActionKind = (typeof ACTIONS)[number];

export interface FileAction {
  readonly action: ActionKind;
  readonly filePath: string;
  readonly previousPath?: string | undefined;
  /** Decoded (text or base64): the bytes of the new content, if any. */
  readonly content?: Uint8Array | undefined;
  readonly executeFilemode?: boolean | undefined;
}

// Gitlab::Regex (12.x): file_path_regex and directory_traversal_regex, with their messages.
const FILE_PATH = /^[\p{L}\p{N}_\-./@]*$/u;
const TRAVERSAL = /^\.{1,2}$|^\.\.[/\\]|[/\\]\.\.$|[/\\]\.\.[/\\]|\n/;

/** Gitlab::Utils.check_path_traversal!: what the API's `file_path: true` validator refuses ("should be a valid file path"). */
export const isTraversal = (path: string) => TRAVERSAL.test(path);

function checkPath(path: string) {
  const refusal = (reason: string) => serviceError(`Your changes could not be committed, because the file name, \`${path}\` ${reason}`);
  if (TRAVERSAL.test(path)) throw refusal('cannot include directory traversal. ');
  if (!FILE_PATH.test(path)) throw refusal("can contain only letters, digits, '_', '-', '@' and '.'.");
}

/** Git stores paths without leading, trailing or doubled slashes. */
const normalize = (path: string) => path.split('/').filter((part) => part !== '').join('/');

/**
 * Who refuses an action on a file that is or is not there, and in which words: the commits
 * API's Files::MultiService names the action and the path; the files API's single-file
 * services leave it to git's index (Gitlab::Git::Index, in Gitaly), which names neither.
 */
export type Refusals = 'multi' | 'index';

const INDEX_EXISTS = 'A file with this name already exists';
const INDEX_MISSING = "A file with this name doesn't exist";

/** The files after the actions, and the new blobs. Throws GitLab's refusal for the first bad action. */
export function applyActions(
  before: FileMap,
  actions: readonly FileAction[],
  empty = before.size === 0,
  refusals: Refusals = 'multi',
): { files: Map<string, FileEntry>; blobs: GitObject[] } {
  const files = new Map(before);
  const blobs: GitObject[] = [];
  const write = (path: string, content: Uint8Array, mode: Mode) => {
    const object = blob(content);
    blobs.push(object);
    files.set(path, { mode, sha: object.sha });
  };
  for (const action of actions) {
    if (action.filePath.trim() === '') throw serviceError('You must specify a file_path.');
    checkPath(action.filePath);
    if (action.previousPath !== undefined) checkPath(action.previousPath);
    if (empty && action.action !== 'create' && refusals === 'multi') throw serviceError(`No files to ${action.action}.`);
    const path = normalize(action.filePath);
    if (action.action !== 'create') {
      const existing = action.action === 'move' ? action.previousPath : action.filePath;
      if (existing === undefined || !files.has(normalize(existing))) {
        if (refusals === 'index') throw serviceError(INDEX_MISSING);
        if (action.action === 'move' && existing === undefined) throw serviceError(`You must supply the original file path when moving file \`${action.filePath}\`.`);
        throw serviceError(`File to be ${action.action}d \`${existing}\` does not exist.`);
      }
    }
    const current = files.get(path);
    switch (action.action) {
      case 'create':
        if (current) throw serviceError(refusals === 'index' ? INDEX_EXISTS : `Your changes could not be committed because a file with the name \`${action.filePath}\` already exists.`);
        write(path, action.content ?? new Uint8Array(), MODES.file);
        break;
      case 'update':
        write(path, action.content ?? new Uint8Array(), current!.mode);
        break;
      case 'delete':
        files.delete(path);
        break;
      case 'move': {
        if (current) throw serviceError(`Move destination \`${action.filePath}\` already exists.`);
        const from = normalize(action.previousPath!);
        const moved = files.get(from)!;
        files.delete(from);
        if (action.content === undefined) files.set(path, moved);
        else write(path, action.content, moved.mode);
        break;
      }
      case 'chmod':
        files.set(path, { ...current!, mode: action.executeFilemode ? MODES.executable : MODES.file });
        break;
    }
  }
  return { files, blobs };
}

interface Dir {
  readonly files: Map<string, FileEntry>;
  readonly dirs: Map<string, Dir>;
}

/** The trees of a file map, root last: the root's SHA is `root`. */
export function buildTrees(files: FileMap): { root: string; trees: GitObject[] } {
  const top: Dir = { files: new Map(), dirs: new Map() };
  for (const [path, entry] of files) {
    const parts = path.split('/');
    let dir = top;
    for (const part of parts.slice(0, -1)) {
      if (dir.files.has(part)) throw serviceError(`A file with this name already exists`);
      let next = dir.dirs.get(part);
      if (!next) dir.dirs.set(part, (next = { files: new Map(), dirs: new Map() }));
      dir = next;
    }
    const name = parts[parts.length - 1]!;
    if (dir.dirs.has(name)) throw serviceError(`A directory with this name already exists`);
    dir.files.set(name, entry);
  }
  const trees: GitObject[] = [];
  const write = (dir: Dir): string => {
    const entries: TreeEntry[] = [...dir.files].map(([name, e]) => ({ name, mode: e.mode, sha: e.sha }));
    for (const [name, sub] of dir.dirs) entries.push({ name, mode: MODES.tree, sha: write(sub) });
    const object = tree(entries);
    trees.push(object);
    return object.sha;
  };
  return { root: write(top), trees };
}
