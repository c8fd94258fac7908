import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// GitLab 12.10's Note Hook for a commit comment on a line (LegacyDiffNote): Note#hook_attrs
// carries `st_diff`, the commented file's diff at the commit (Gitlab::Git::Diff#to_hash);
// every other note's is null.

let api: TestServer;
const receiver = new WebhookReceiver();
const clock = new Date(Date.now() + 3_600_000);
const SENDER = orderedSender(clock);

beforeAll(async () => {
  api = await startTestServer({}, { deliveries: false });
  await settled(api);
  await receiver.start();
  expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

async function received(path: string, count: number) {
  const got = await receiver.awaitRequests(path, count, () => sendDueDeliveries(api.handle.db, SENDER));
  expect(got.length, `requests to ${path}`).toBe(count);
  return got.map((r) => JSON.parse(r.body));
}

describe('Note Hook of a commit comment', () => {
  it('a comment on a line of the diff carries st_diff; a plain comment carries null', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    const path = `/notes-${project.id}`;
    const hook = await api.post(`/projects/${project.id}/hooks`, { url: `${receiver.url}${path}`, push_events: false, note_events: true });
    expect(hook.status, hook.text).toBe(201);
    const commits = `/projects/${project.id}/repository/commits`;
    const edit = async (action: string, content: string, file = 'dir/f.txt') => {
      const res = await api.post(commits, { branch: 'master', commit_message: `${action} ${file}`, actions: [{ action, file_path: file, content }] });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    await edit('create', 'x\na\nb\nc\n');
    const sha = await edit('update', 'a\nB\nc\nd\n');
    const diff = (await api.get(`${commits}/${sha}/diff`)).body;
    expect(diff.map((d: { diff: string }) => d.diff)).toEqual(['@@ -1,4 +1,4 @@\n-x\n a\n-b\n+B\n c\n+d\n']);

    const onLine = await api.post(`${commits}/${sha}/comments`, { note: 'on a line', path: 'dir/f.txt', line: 2, line_type: 'new' });
    expect(onLine.status, onLine.text).toBe(201);
    const plain = await api.post(`${commits}/${sha}/comments`, { note: 'plain' });
    expect(plain.status, plain.text).toBe(201);
    const created = await edit('create', 'new\n', 'g.txt');
    const onNewFile = await api.post(`${commits}/${created}/comments`, { note: 'on a new file', path: 'g.txt', line: 1 });
    expect(onNewFile.status, onNewFile.text).toBe(201);

    const bodies = await received(path, 3);
    const byNote = new Map(bodies.map((b) => [b.object_attributes.note as string, b]));
    expect(byNote.get('on a line')!.object_attributes).toMatchObject({
      type: 'LegacyDiffNote',
      noteable_type: 'Commit',
      commit_id: sha,
      line_code: expect.stringMatching(/^[0-9a-f]{40}_\d+_\d+$/),
      st_diff: {
        diff: '@@ -1,4 +1,4 @@\n-x\n a\n-b\n+B\n c\n+d\n',
        new_path: 'dir/f.txt',
        old_path: 'dir/f.txt',
        a_mode: '100644',
        b_mode: '100644',
        new_file: false,
        renamed_file: false,
        deleted_file: false,
        too_large: false,
      },
    });
    // Gitlab::Git::Diff::SERIALIZE_KEYS, in their order.
    expect(Object.keys(byNote.get('on a line')!.object_attributes.st_diff)).toEqual(['diff', 'new_path', 'old_path', 'a_mode', 'b_mode', 'new_file', 'renamed_file', 'deleted_file', 'too_large']);
    expect(byNote.get('plain')!.object_attributes).toMatchObject({ type: null, line_code: null, st_diff: null });
    expect(byNote.get('on a new file')!.object_attributes.st_diff).toEqual({
      diff: '@@ -0,0 +1 @@\n+new\n',
      new_path: 'g.txt',
      old_path: 'g.txt',
      a_mode: '0',
      b_mode: '100644',
      new_file: true,
      renamed_file: false,
      deleted_file: false,
      too_large: false,
    });
  });
});
