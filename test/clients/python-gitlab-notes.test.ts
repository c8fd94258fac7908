import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('notes');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

project.commits.create({"branch": "master", "commit_message": "Initial", "actions": [{"action": "create", "file_path": "README.md", "content": "hello\n"}]})
head = project.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "Add a", "actions": [{"action": "create", "file_path": "a.txt", "content": "a\n"}]})
mr = project.mergerequests.create({"title": "Add a", "source_branch": "feature", "target_branch": "master"})

note = mr.notes.create({"body": "First"})
out["created"] = note.attributes
note.body = "First, edited"
note.save()
out["got"] = mr.notes.get(note.id).body
out["listed"] = [n.body for n in mr.notes.list()]
award = note.awardemojis.create({"name": "heart"})
out["note_award"] = [award.name, award.awardable_type, award.awardable_id]
second = mr.notes.create({"body": "Second"})
second.delete()
out["after_delete"] = [n.body for n in mr.notes.list()]

discussion = mr.discussions.create({"body": "A thread"})
out["discussion"] = [len(discussion.id), discussion.individual_note, discussion.attributes["notes"][0]["body"]]
reply = discussion.notes.create({"body": "A reply"})
out["reply"] = [reply.body, reply.type]
discussion.resolved = True
discussion.save()
got = mr.discussions.get(discussion.id)
out["resolved"] = [n["resolved"] for n in got.attributes["notes"]]
out["discussions"] = [len(d.attributes["notes"]) for d in mr.discussions.list()]

emoji = mr.awardemojis.create({"name": "thumbsup"})
out["awards"] = [a.name for a in mr.awardemojis.list()]
out["upvotes"] = project.mergerequests.get(mr.iid).upvotes
mr.awardemojis.delete(emoji.id)
out["awards_after"] = [a.name for a in mr.awardemojis.list()]

commit = project.commits.get(head.id)
comment = commit.comments.create({"note": "Nice commit"})
out["comment"] = comment.attributes["note"]
out["comments"] = [c.note for c in commit.comments.list()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: notes, discussions, award emoji`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('mr.notes.create / get / list, note.save(), note.delete(), note.awardemojis.create', () => {
    expect(out.created).toMatchObject({ body: 'First', type: null, system: false, noteable_type: 'MergeRequest', noteable_iid: 1 });
    expect(out.got).toBe('First, edited');
    expect(out.listed).toEqual(['First, edited']);
    expect(out.note_award).toEqual(['heart', 'Note', out.created.id]);
    expect(out.after_delete).toEqual(['First, edited']);
  });

  it('mr.discussions.create / list / get, discussion.notes.create, discussion.resolved = True; discussion.save()', () => {
    expect(out.discussion).toEqual([40, false, 'A thread']);
    expect(out.reply).toEqual(['A reply', 'DiscussionNote']);
    expect(out.resolved).toEqual([true, true]);
    expect(out.discussions).toEqual([1, 2]);
  });

  it('mr.awardemojis.create / list / delete, and commit.comments.create / list', () => {
    expect(out.awards).toEqual(['thumbsup']);
    expect(out.upvotes).toBe(1);
    expect(out.awards_after).toEqual([]);
    expect(out.comment).toBe('Nice commit');
    expect(out.comments).toEqual(['Nice commit']);
    expect(out.warnings).toEqual([]);
  });
});
