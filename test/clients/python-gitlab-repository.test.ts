import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('repository');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.create({"name": "Client Repo", "initialize_with_readme": True})

commit = project.commits.create({
    "branch": "feature",
    "start_branch": "master",
    "commit_message": "Add a script",
    "actions": [
        {"action": "create", "file_path": "bin/run.sh", "content": "#!/bin/sh\necho hi\n"},
        {"action": "chmod", "file_path": "bin/run.sh", "execute_filemode": True},
        {"action": "update", "file_path": "README.md", "content": "# Client Repo\n\nUpdated\n"},
    ],
})
out["commit"] = commit.attributes
out["commits"] = [c.title for c in project.commits.list(ref_name="feature", get_all=True)]
out["one"] = project.commits.get(commit.id).parent_ids

out["branches"] = [b.name for b in project.branches.list(get_all=True)]
project.branches.create({"branch": "topic", "ref": "feature"})
out["topic"] = project.branches.get("topic").commit["id"]
project.branches.delete("topic")
out["after_delete"] = [b.name for b in project.branches.list(get_all=True)]

f = project.files.get(file_path="README.md", ref="feature")
out["file"] = [f.file_name, f.decode().decode(), f.last_commit_id]
out["raw"] = project.files.raw(file_path="bin/run.sh", ref="feature").decode()
out["tree"] = [[t["path"], t["mode"]] for t in project.repository_tree(ref="feature", recursive=True, get_all=True)]

try:
    project.commits.create({"branch": "feature", "commit_message": "x", "actions": [{"action": "create", "file_path": "README.md", "content": "x"}]})
except gitlab.exceptions.GitlabCreateError as e:
    out["exists"] = [e.response_code, e.error_message]

# Blobs, merge base and a commit's refs.
readme_blob = [t for t in project.repository_tree(ref="feature", get_all=True) if t["name"] == "README.md"][0]["id"]
out["blob"] = project.repository_blob(readme_blob)
out["raw_blob"] = project.repository_raw_blob(readme_blob).decode()
out["merge_base"] = project.repository_merge_base(["feature", "master"])["id"]
out["master_head"] = project.commits.get("master").id
out["commit_refs"] = project.commits.get(out["master_head"]).refs()
opened = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Client feature"})
out["commit_mrs"] = [[m["iid"], m["title"]] for m in project.commits.get(commit.id).merge_requests()]
out["opened_iid"] = opened.iid

out["contributors"] = project.repository_contributors(order_by="name", sort="asc")
out["snapshot_size"] = len(project.snapshot())
out["archive_magic"] = [project.repository_archive()[:2].hex(), project.repository_archive(format="zip")[:2].hex(), len(project.repository_archive(sha="feature", format="tar"))]

# Revert and cherry-pick.
picked_from = project.commits.create({"branch": "pick-source", "start_branch": "master", "commit_message": "To pick", "actions": [{"action": "create", "file_path": "picked.txt", "content": "p"}]})
project.commits.get(picked_from.id).cherry_pick(branch="master")
out["after_pick"] = project.commits.list(ref_name="master", get_all=True)[0].message
reverted = project.commits.get(project.commits.list(ref_name="master", get_all=True)[0].id).revert(branch="master")
out["reverted"] = reverted["title"]
out["picked_from"] = picked_from.id

# The files API: one commit per call (python-gitlab's own tests build repositories this way).
created = project.files.create({"file_path": "docs/notes.md", "branch": "master", "content": "first\n", "commit_message": "Add notes"})
out["files_created"] = created.attributes
notes = project.files.get(file_path="docs/notes.md", ref="master")
notes.content = "second\n"
notes.save(branch="master", commit_message="Edit notes")
out["files_updated"] = project.files.get(file_path="docs/notes.md", ref="master").decode().decode()
out["files_head"] = project.commits.list(ref_name="master", get_all=True)[0].title
out["files_blame"] = [[r["commit"]["message"], r["lines"]] for r in project.files.blame(file_path="docs/notes.md", ref="master")]
project.files.delete(file_path="docs/notes.md", branch="master", commit_message="Drop notes")
try:
    project.files.get(file_path="docs/notes.md", ref="master")
except gitlab.exceptions.GitlabGetError as e:
    out["files_deleted"] = [e.response_code, e.error_message]
try:
    project.files.create({"file_path": "README.md", "branch": "master", "content": "x", "commit_message": "x"})
except gitlab.exceptions.GitlabCreateError as e:
    out["files_exists"] = [e.response_code, e.error_message]

# Tags and protected tags.
project.protectedtags.create({"name": "release-*", "create_access_level": 40})
tag = project.tags.create({"tag_name": "v1.0", "ref": "master", "message": "First release"})
out["tag"] = tag.attributes
out["tag_get"] = project.tags.get("v1.0").commit["id"]
project.tags.create({"tag_name": "release-1", "ref": "feature"})
out["tags"] = [[t.name, t.protected] for t in project.tags.list(order_by="name", sort="asc", get_all=True)]
out["protected_tags"] = [p.name for p in project.protectedtags.list(get_all=True)]
project.tags.delete("v1.0")
out["tags_after_delete"] = [t.name for t in project.tags.list(get_all=True)]
try:
    project.tags.get("release-1").delete()
except gitlab.exceptions.GitlabDeleteError as e:
    out["protected_delete"] = [e.response_code, e.error_message]
project.protectedtags.delete("release-*")
project.tags.delete("release-1")
out["tags_at_end"] = len(project.tags.list(get_all=True))
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: repository`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken });
  });
  afterAll(() => api?.close());

  it('commits actions on a new branch: project.commits.create() / .list() / .get()', () => {
    expect(out.commit).toMatchObject({ title: 'Add a script', parent_ids: [expect.stringMatching(/^[0-9a-f]{40}$/)], stats: { additions: 3, deletions: 0, total: 3 } });
    expect(out.commits).toEqual(['Add a script', 'Initial commit']);
    expect(out.one).toEqual(out.commit.parent_ids);
  });

  it('creates, gets and deletes branches: project.branches', () => {
    expect(out.branches).toEqual(['feature', 'master']);
    expect(out.topic).toBe(out.commit.id);
    expect(out.after_delete).toEqual(['feature', 'master']);
  });

  it('reads files and trees: project.files.get() / .raw(), project.repository_tree()', () => {
    expect(out.file).toEqual(['README.md', '# Client Repo\n\nUpdated\n', out.commit.id]);
    expect(out.raw).toBe('#!/bin/sh\necho hi\n');
    expect(out.tree).toEqual([
      ['bin', '040000'],
      ['README.md', '100644'],
      ['bin/run.sh', '100755'],
    ]);
    expect(out.exists).toEqual([400, 'Your changes could not be committed because a file with the name `README.md` already exists.']);
  });

  it('reads blobs, the merge base and a commit\'s refs: project.repository_blob() / _raw_blob() / _merge_base(), commit.refs() / .merge_requests()', () => {
    expect(out.blob).toMatchObject({ encoding: 'base64', sha: expect.stringMatching(/^[0-9a-f]{40}$/), size: 23 });
    expect(out.raw_blob).toBe('# Client Repo\n\nUpdated\n');
    expect(out.merge_base).toBe(out.master_head);
    expect(out.commit_mrs).toEqual([[out.opened_iid, 'Client feature']]);
    expect(out.commit_refs).toEqual([
      { type: 'branch', name: 'feature' },
      { type: 'branch', name: 'master' },
    ]);
  });

  it('downloads archives: project.repository_archive()', () => {
    expect(out.archive_magic.slice(0, 2)).toEqual(['1f8b', '504b']); // gzip, zip
    expect(out.archive_magic[2] % 512).toBe(0); // a tar: whole records
  });

  it('downloads a snapshot: project.snapshot()', () => {
    expect(out.snapshot_size % 512).toBe(0);
    expect(out.snapshot_size).toBeGreaterThan(2048);
  });

  it('creates, lists and deletes tags and protected tags: project.tags, project.protectedtags', () => {
    expect(out.tag).toMatchObject({ name: 'v1.0', message: 'First release', release: null, protected: false, commit: { title: 'Drop notes' } });
    expect(out.tag.target).not.toBe(out.tag.commit.id);
    expect(out.tag_get).toBe(out.tag.commit.id);
    expect(out.tags).toEqual([['release-1', true], ['v1.0', false]]);
    expect(out.protected_tags).toEqual(['release-*']);
    expect(out.tags_after_delete).toEqual(['release-1']);
    expect(out.protected_delete).toEqual([400, 'Protected tags cannot be deleted.']);
    expect(out.tags_at_end).toBe(0);
  });

  it('lists contributors: project.repository_contributors()', () => {
    expect(out.contributors).toEqual([{ name: 'Administrator', email: 'admin@example.com', commits: 1, additions: 0, deletions: 0 }]);
  });

  it('cherry-picks and reverts: commit.cherry_pick() / .revert()', () => {
    expect(out.after_pick).toBe(`To pick\n\n(cherry picked from commit ${out.picked_from})`);
    expect(out.reverted).toBe('Revert "To pick"');
  });

  it('writes files one commit each: project.files.create() / ProjectFile.save() / project.files.delete()', () => {
    expect(out.files_created).toMatchObject({ file_path: 'docs/notes.md', branch: 'master' });
    expect(out.files_updated).toBe('second\n');
    expect(out.files_blame).toEqual([['Edit notes', ['second']]]);
    expect(out.files_head).toBe('Edit notes');
    expect(out.files_deleted).toEqual([404, '404 File Not Found']);
    expect(out.files_exists).toEqual([400, 'A file with this name already exists']);
  });
});
