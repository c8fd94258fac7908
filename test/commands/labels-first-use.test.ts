import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextId } from '../../src/commands/kernel/handler.js';
import { DEFAULT_LABEL_COLOR, commitWithLabels, findOrCreateLabels, labelNames } from '../../src/commands/labels.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { labels } from '../../src/domain/labels.js';
import { spec, run } from '../../src/commands/kernel/run.js';
import { projects } from '../../src/domain/projects/aggregate.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

const root = () => ({ ctx: api.runtime.app.commands, metadata: { actor_id: 1, actor_username: 'root' } });

let projectCounter = 0;
async function projectWithLabels(...titles: string[]): Promise<number> {
  const created = await api.post('/projects', { name: `first-use-${++projectCounter}` });
  expect(created.status).toBe(201);
  const id = created.body.id as number;
  for (const name of titles) expect((await api.post(`/projects/${id}/labels`, { name, color: '#FF0000' })).status).toBe(201);
  return id;
}

const labelsOf = async (projectId: number) =>
  ((await api.get(`/projects/${projectId}/labels`)).body as { name: string; color: string }[]).map((l) => `${l.name} ${l.color}`);

const star = (projectId: number) => spec(projects, projectId, { type: 'StarProject', userId: 1 });

describe('labelNames (the API `labels` parameter)', () => {
  it.each([
    ['bug', ['bug']],
    ['bug, feature ,,bug', ['bug', 'feature']],
    [' , ', []],
    ['', []],
    [['bug,feature', 'ux'], ['bug', 'feature', 'ux']],
    [null, []],
  ] as const)('%j → %j', (value, names) => {
    expect(labelNames(value)).toEqual(names);
  });
});

describe('labels on first use (Labels::FindOrCreateService)', () => {
  it('finds the existing labels and creates the missing ones in the default colour, with the issuable in one commit', async () => {
    const projectId = await projectWithLabels('bug');
    const { labels: found, results } = await commitWithLabels(root(), { projectId, names: ['bug', 'feature'], mayCreate: true }, () => [star(projectId)]);

    expect(found.map((l) => [l.title, l.created])).toEqual([['bug', false], ['feature', true]]);
    expect(results.map((r) => r.events.map((e) => e.type))).toEqual([['ProjectStarred']]);
    expect(await labelsOf(projectId)).toEqual(['bug #FF0000', `feature ${DEFAULT_LABEL_COLOR}`]);
    expect((await api.get(`/projects/${projectId}`)).body.star_count).toBe(1);
    const featureId = found.find((l) => l.title === 'feature')!.id;
    expect((await api.events(`label-${featureId}`)).map((e) => [e.type, e.metadata.actor_id])).toEqual([['LabelCreated', 1]]);
  });

  it('creates nothing when the issuable is refused', async () => {
    const projectId = await projectWithLabels();
    const missing = await nextId(api.runtime.app.commands.db, 'labels_id_seq');
    const refused = commitWithLabels(root(), { projectId, names: ['orphan'], mayCreate: true }, () => [
      spec(labels, missing, { type: 'UpdateLabel', fields: { description: 'x' } }),
    ]);
    await expect(refused).rejects.toMatchObject({ code: 'not_found' });
    expect(await labelsOf(projectId)).toEqual([]);
  });

  it('only finds, and leaves out the rest, for a caller who may not create labels', async () => {
    const projectId = await projectWithLabels('bug');
    const planned = await findOrCreateLabels(api.runtime.app.commands.db, { projectId, names: ['new', 'bug'], mayCreate: false });
    expect(planned.labels.map((l) => l.title)).toEqual(['bug']);
    expect(planned.specs).toEqual([]);
  });

  it('matches titles exactly, case included, as find_by(title:)', async () => {
    const projectId = await projectWithLabels('Bug');
    const { labels: found } = await commitWithLabels(root(), { projectId, names: ['bug', 'Bug'], mayCreate: true }, () => []);
    expect(found.map((l) => [l.title, l.created])).toEqual([['bug', true], ['Bug', false]]);
    // Compared as sets: the order of `Bug` and `bug` is the database collation's.
    expect((await labelsOf(projectId)).sort()).toEqual([`Bug #FF0000`, `bug ${DEFAULT_LABEL_COLOR}`].sort());
  });

  it('leaves out a name the Label model refuses, without an error, as GitLab does', async () => {
    const projectId = await projectWithLabels();
    const { labels: found } = await commitWithLabels(root(), { projectId, names: ['x'.repeat(256), 'ok', 'ok'], mayCreate: true }, () => []);
    expect(found.map((l) => l.title)).toEqual(['ok']);
    expect(await labelsOf(projectId)).toEqual([`ok ${DEFAULT_LABEL_COLOR}`]);
  });

  it('finds a label a concurrent request created in between, and retries the commit', async () => {
    const projectId = await projectWithLabels();
    let builds = 0;
    const { labels: found } = await commitWithLabels(root(), { projectId, names: ['race'], mayCreate: true }, async () => {
      builds += 1;
      if (builds === 1) {
        // Another request creates the label after this one looked it up.
        const id = await nextId(api.runtime.app.commands.db, 'labels_id_seq');
        await run(root(), labels, id, { type: 'CreateLabel', projectId, fields: { title: 'race', color: '#00FF00' } });
      }
      return [star(projectId)];
    });
    expect(builds).toBe(2);
    expect(found.map((l) => [l.title, l.created])).toEqual([['race', false]]);
    expect(await labelsOf(projectId)).toEqual(['race #00FF00']);
    expect((await api.get(`/projects/${projectId}`)).body.star_count).toBe(1);
  });

  it('finds nothing for no names', async () => {
    const projectId = await projectWithLabels('bug');
    expect(await findOrCreateLabels(api.runtime.app.commands.db, { projectId, names: [' ', ''], mayCreate: true })).toEqual({ labels: [], specs: [] });
  });
});
