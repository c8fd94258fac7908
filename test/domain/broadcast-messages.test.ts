import { describe, expect, it } from 'vitest';
import {
  type BroadcastMessageCommand,
  type BroadcastMessageEvent,
  type BroadcastMessageRecord,
  type Candidate,
  broadcastMessageDecider,
  broadcastMessageEventIndex,
  broadcastMessageStreamId,
  isActive,
} from '../../src/domain/broadcast-messages.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(broadcastMessageDecider);

const START = '2030-01-02T10:00:00.000Z';
const END = '2030-01-02T11:00:00.000Z';
const record = { message: 'Maintenance tonight', starts_at: START, ends_at: END, color: '#E75E40', font: '#FFFFFF', target_path: null };
const created: BroadcastMessageEvent = { type: 'BroadcastMessageCreated', data: { id: 4, ...record } };
const deleted: BroadcastMessageEvent = { type: 'BroadcastMessageDeleted', data: { id: 4 } };

const create = (extra: Partial<Candidate> = {}): BroadcastMessageCommand => ({
  type: 'CreateBroadcastMessage',
  attributes: { ...record, ...extra } as BroadcastMessageRecord,
});
const update = (attributes: Partial<Candidate>): BroadcastMessageCommand => ({ type: 'UpdateBroadcastMessage', attributes });
const colorError = (field: 'color' | 'font') => rejected('invalid', { fields: { [field]: ['must be a valid color code'] } });

describe('broadcast messages decider', () => {
  it('names one stream per message and indexes its events by the message', () => {
    expect(broadcastMessageStreamId(4)).toBe('broadcast-message-4');
    expect(broadcastMessageEventIndex(created)).toEqual({ targetType: 'BroadcastMessage', targetId: 4 });
  });

  describe('CreateBroadcastMessage', () => {
    it('creates the message with its fields', () => {
      on(4).given().when(create()).then([created]);
      on(4)
        .given()
        .when(create({ color: '#000', font: '#cecece', target_path: '*/welcome' }))
        .then([{ type: 'BroadcastMessageCreated', data: { id: 4, ...record, color: '#000', font: '#cecece', target_path: '*/welcome' } }]);
    });

    it('refuses a second creation on the same stream', () => {
      on(4).given(created).when(create()).then(rejected('conflict'));
    });

    it.each(['', '   ', '\n\t'])("refuses a blank message %j: {message: [can't be blank]}", (message) => {
      on(4).given().when(create({ message })).then(rejected('invalid', { fields: { message: ["can't be blank"] } }));
    });

    it.each(['#fff', '#FFFFFF', '#0a0B0c', '#abc\n', '', '  ', null])('accepts the colour %j (blank is allowed)', (color) => {
      on(4).given().when(create({ color, font: color })).then([{ type: 'BroadcastMessageCreated', data: { id: 4, ...record, color, font: color } }]);
    });

    it.each(['red', '#ff', '#ffff', '#fffffff', 'ffffff', '#ggg', '#fff ', ' #fff', '#fff\n\n'])('refuses the colour %j', (value) => {
      on(4).given().when(create({ color: value })).then(colorError('color'));
      on(4).given().when(create({ font: value })).then(colorError('font'));
    });

    it('reports every failed validation in the model order', () => {
      on(4)
        .given()
        .when(create({ message: '', color: 'x', font: 'y' }))
        .then(rejected('invalid', { fields: { message: ["can't be blank"], color: ['must be a valid color code'], font: ['must be a valid color code'] } }));
    });

    it('accepts an end before the start (GitLab 12 does not compare them)', () => {
      on(4).given().when(create({ starts_at: END, ends_at: START })).then([{ type: 'BroadcastMessageCreated', data: { id: 4, ...record, starts_at: END, ends_at: START } }]);
    });
  });

  describe('UpdateBroadcastMessage', () => {
    it('records only the fields that change', () => {
      on(4)
        .given(created)
        .when(update({ message: 'New text', color: '#E75E40', font: '#000000', target_path: undefined }))
        .then([{ type: 'BroadcastMessageUpdated', data: { id: 4, changes: { message: 'New text', font: '#000000' } } }]);
    });

    it('changes nothing when nothing differs', () => {
      on(4).given(created).when(update({ message: record.message, starts_at: START })).then([]);
      on(4).given(created).when(update({})).then([]);
    });

    it('moves the times and clears the optional fields with null', () => {
      const later = '2031-01-01T00:00:00.000Z';
      on(4)
        .given(created)
        .when(update({ starts_at: later, ends_at: later, color: null, target_path: null }))
        .then([{ type: 'BroadcastMessageUpdated', data: { id: 4, changes: { starts_at: later, ends_at: later, color: null } } }]);
    });

    it("refuses to blank the required fields: can't be blank", () => {
      on(4).given(created).when(update({ message: ' ' })).then(rejected('invalid', { fields: { message: ["can't be blank"] } }));
      on(4).given(created).when(update({ message: null })).then(rejected('invalid', { fields: { message: ["can't be blank"] } }));
      on(4)
        .given(created)
        .when(update({ starts_at: null, ends_at: null }))
        .then(rejected('invalid', { fields: { starts_at: ["can't be blank"], ends_at: ["can't be blank"] } }));
    });

    it('validates the colours', () => {
      on(4).given(created).when(update({ color: 'blue' })).then(colorError('color'));
      on(4).given(created).when(update({ font: '#12345' })).then(colorError('font'));
    });

    it('applies updates to the state', () => {
      const state = on(4)
        .given(created, { type: 'BroadcastMessageUpdated', data: { id: 4, changes: { message: 'B' } } })
        .when(update({ message: 'B' }))
        .state();
      expect(state.record?.message).toBe('B');
    });

    it('is a missing record for an unknown or deleted message', () => {
      on(4).given().when(update({ message: 'x' })).then(rejected('not_found', { record: true }));
      on(4).given(created, deleted).when(update({ message: 'x' })).then(rejected('not_found', { record: true }));
    });
  });

  describe('DeleteBroadcastMessage', () => {
    it('deletes the message once', () => {
      on(4).given(created).when({ type: 'DeleteBroadcastMessage' }).then([deleted]);
      on(4).given(created, deleted).when({ type: 'DeleteBroadcastMessage' }).then(rejected('not_found', { record: true }));
      on(4).given().when({ type: 'DeleteBroadcastMessage' }).then(rejected('not_found', { record: true }));
    });
  });

  it('is active from its start to its end, both included', () => {
    const [start, end] = [new Date(START), new Date(END)];
    expect(isActive(start, end, new Date('2030-01-02T09:59:59.999Z'))).toBe(false);
    expect(isActive(start, end, start)).toBe(true);
    expect(isActive(start, end, new Date('2030-01-02T10:30:00Z'))).toBe(true);
    expect(isActive(start, end, end)).toBe(true);
    expect(isActive(start, end, new Date('2030-01-02T11:00:00.001Z'))).toBe(false);
  });
});
