import { defineAggregate } from '../aggregate.js';
import { applicationSettingsDecider, applicationSettingsEvents, applicationSettingsStreamId } from './decider.js';

/** The instance's application settings: one stream (src/domain/application-settings/). */
export const applicationSettings = defineAggregate({
  name: 'application_settings',
  streamId: applicationSettingsStreamId,
  events: applicationSettingsEvents,
  decider: applicationSettingsDecider,
  index: () => ({ targetType: 'ApplicationSetting', targetId: 1 }),
});
