import { describe, expect, it } from 'vitest';
import { type LabelEvent, labelClaims, labelColor, labelDecider, labelTextColor } from '../../src/domain/labels.js';
import { deciderSpec, rejected } from '../support/decider.js';

const label = deciderSpec(labelDecider);
const ID = 5;
const PROJECT = 3;
const ref = { id: ID, project_id: PROJECT };
const created: LabelEvent = { type: 'LabelCreated', data: { ...ref, title: 'bug', color: '#FF0000', description: null, priority: null } };
const create = (fields: object = {}) => ({ type: 'CreateLabel' as const, projectId: PROJECT, fields: { title: 'bug', color: 'red', ...fields } });

describe('label colours', () => {
  it('turns a CSS colour keyword into its hex code, and leaves anything else as sent', () => {
    expect(labelColor('Red')).toBe('#FF0000');
    expect(labelColor(' rebeccapurple ')).toBe('#663399');
    expect(labelColor('#abc')).toBe('#abc');
    expect(labelColor('nocolor')).toBe('nocolor');
  });

  it('picks dark text above a sum of 500, white below (LabelsHelper.text_color_for_bg)', () => {
    expect(labelTextColor('#FFFFFF')).toBe('#333333');
    expect(labelTextColor('#ffe')).toBe('#333333');
    expect(labelTextColor('#fe0')).toBe('#FFFFFF');
    expect(labelTextColor('#428BCA')).toBe('#FFFFFF');
  });
});

describe('the label decider', () => {
  it('creates with the colour converted and a stripped title; a blank description is none', () => {
    label.on(ID).given().when(create({ title: ' bug ', description: ' ' })).then([created]);
    label.on(ID).given().when(create({ priority: 0, description: 'd' })).then([{ type: 'LabelCreated', data: { ...created.data, priority: 0, description: 'd' } }]);
  });

  it("validates as GitLab's Label does", () => {
    label.on(ID).given().when(create({ title: 'a,b', color: '#ggg' })).then(rejected('invalid', { fields: { color: ['must be a valid color code'], title: ['is invalid'] } }));
    label.on(ID).given().when(create({ title: 'x'.repeat(256) })).then(rejected('invalid', { fields: { title: ['is too long (maximum is 255 characters)'] } }));
    label.on(ID).given().when(create({ priority: -1 })).then(rejected('invalid', { fields: { priority: ['must be greater than or equal to 0'] } }));
  });

  it('updates only what changed, priority removable', () => {
    const withPriority: LabelEvent = { type: 'LabelCreated', data: { ...created.data, priority: 2 } };
    label.on(ID).given(created).when({ type: 'UpdateLabel', fields: { color: 'RED', title: 'bug ' } }).then([]);
    label.on(ID).given(withPriority).when({ type: 'UpdateLabel', fields: { priority: null, title: 'defect' } }).then([{ type: 'LabelUpdated', data: { ...ref, changes: { title: 'defect', priority: null } } }]);
    label.on(ID).given(created).when({ type: 'DeleteLabel' }).then([{ type: 'LabelDeleted', data: { ...ref, title: 'bug' } }]);
    label.on(ID).given(created, { type: 'LabelDeleted', data: { ...ref, title: 'bug' } }).when({ type: 'DeleteLabel' }).then(rejected('not_found'));
  });

  it('holds the title while it is the label\'s', () => {
    const state = { id: ID, label: { projectId: PROJECT, title: 'bug', color: '#FF0000', description: null, priority: null } };
    expect(labelClaims(created, { id: ID, label: null }).acquire.map((c) => c.key)).toEqual(['3/bug']);
    const renamed = labelClaims({ type: 'LabelUpdated', data: { ...ref, changes: { title: 'defect' } } }, state);
    expect([renamed.acquire.map((c) => c.key), renamed.release.map((c) => c.key)]).toEqual([['3/defect'], ['3/bug']]);
  });
});
