import { dateTime, entity, int, nullable, ref, str, values } from './dsl.js';

const resourceEvent = {
  id: int,
  user: nullable(ref('UserBasic')),
  created_at: dateTime,
  resource_type: values('Issue', 'MergeRequest', 'Epic'),
  resource_id: int,
};

export const ResourceLabelEvent = entity('Entities::ResourceLabelEvent.', { ...resourceEvent, label: nullable(ref('LabelBasic')), action: values('add', 'remove') });

export const ResourceMilestoneEvent = entity('Entities::ResourceMilestoneEvent.', { ...resourceEvent, milestone: nullable(ref('Milestone')), action: values('add', 'remove'), state: str });

export const ResourceStateEvent = entity('Entities::ResourceStateEvent.', { ...resourceEvent, state: str });
