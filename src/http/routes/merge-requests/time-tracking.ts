import { timeTrackingRoutes } from '../issuables/time-tracking.js';
import { MERGE_REQUEST_KIND } from './find.js';

/** API::TimeTrackingEndpoints as API::MergeRequests includes them (one implementation with issues'). */
export const mergeRequestTimeTrackingRoutes = timeTrackingRoutes(MERGE_REQUEST_KIND);
