import { z } from 'zod';
import { VISIBILITIES } from '../access.js';
import type { EventOf, EventSchemas, FeedIndex, Upcasters } from '../events.js';
import { uploadRef } from '../uploads.js';
import { groupSettings } from './settings.js';

/** The group's full path (`top/sub`) and name (`Top / Sub`) as they are after the event; its descendants' follow. */
const fullPathAndName = { full_path: z.string(), full_name: z.string() };

export const groupEvents = {
  GroupCreated: z.strictObject({
    id: z.int(),
    parent_id: z.int().nullable(),
    /** Root first, ending with this group's id. */
    traversal_ids: z.array(z.int()),
    ...fullPathAndName,
    ...groupSettings.shape,
  }),
  GroupUpdated: z.strictObject({
    id: z.int(),
    /** Only the settings that changed. */
    changes: groupSettings.partial(),
    ...fullPathAndName,
    /** Present when the path or name changed: what descendants' paths and names began with. */
    previous_full_path: z.string().optional(),
    previous_full_name: z.string().optional(),
    /** The visibility before, when it changed (the audit shows it); null otherwise and in events stored before schema version 2. */
    previous_visibility: z.enum(VISIBILITIES).nullable(),
  }),
  /** DELETE /groups/:id: the group and its subtree are hidden at once; a reactor removes them. */
  GroupDeletionScheduled: z.strictObject({ id: z.int(), full_path: z.string() }),
  GroupDeleted: z.strictObject({ id: z.int(), full_path: z.string() }),
  /** GitLab's custom attributes (admin-only key/value pairs on a group). */
  GroupCustomAttributeSet: z.strictObject({ id: z.int(), key: z.string(), value: z.string() }),
  GroupCustomAttributeDeleted: z.strictObject({ id: z.int(), key: z.string() }),
  /** GitLab: `avatar` of POST /groups and PUT /groups/:id; the bytes are in `uploads`, under `avatar.sha256`. */
  GroupAvatarChanged: z.strictObject({ id: z.int(), avatar: uploadRef }),
} satisfies EventSchemas;

export type GroupEvent = EventOf<typeof groupEvents>;

/** Schema version 2 of GroupUpdated added the visibility before the change; older events did not record it. */
export const groupUpcasters: Upcasters<typeof groupEvents> = {
  GroupUpdated: { 1: (data: object) => ({ ...data, previous_visibility: null }) },
};

export function groupEventIndex(event: GroupEvent): FeedIndex {
  return { groupId: event.data.id, targetType: 'Group', targetId: event.data.id };
}
