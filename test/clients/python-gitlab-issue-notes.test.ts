import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('issue and snippet notes');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

issue = project.issues.create({"title": "Commented"})
note = issue.notes.create({"body": "First"})
out["created"] = [note.body, note.noteable_type, note.noteable_iid, note.system]
out["listed"] = [n.body for n in issue.notes.list()]
discussion = issue.discussions.create({"body": "A thread"})
reply = discussion.notes.create({"body": "A reply"})
out["reply"] = [reply.body, reply.type]
out["discussion"] = [n["body"] for n in issue.discussions.get(discussion.id).attributes["notes"]]
emoji = issue.awardemojis.create({"name": "thumbsup"})
out["issue_award"] = [emoji.name, emoji.awardable_type]
award = note.awardemojis.create({"name": "heart"})
out["note_award"] = [award.name, award.awardable_type, award.awardable_id == note.id]
got = project.issues.get(issue.iid)
out["counts"] = [got.user_notes_count, got.upvotes, got.downvotes]

snippet = project.snippets.create({"title": "Snip", "file_name": "a.rb", "content": "puts 1", "visibility": "private"})
snippet.notes.create({"body": "On a snippet"})
out["snippet_notes"] = [[n.body, n.noteable_type] for n in snippet.notes.list()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: issue and project snippet notes`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('issue.notes.create / list', () => {
    expect(out.created).toEqual(['First', 'Issue', 1, false]);
    expect(out.listed).toEqual(['First']);
  });
  it('issue.discussions.create and a reply', () => {
    expect(out.reply).toEqual(['A reply', 'DiscussionNote']);
    expect(out.discussion).toEqual(['A thread', 'A reply']);
  });
  it('issue.awardemojis.create and note.awardemojis.create', () => {
    expect(out.issue_award).toEqual(['thumbsup', 'Issue']);
    expect(out.note_award).toEqual(['heart', 'Note', true]);
    expect(out.counts).toEqual([3, 1, 0]);
  });
  it('project snippet notes', () => {
    expect(out.snippet_notes).toEqual([['On a snippet', 'Snippet']]);
  });
});
