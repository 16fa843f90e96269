import { z } from 'zod';
import { Uuid } from './common.js';

/** The tag events a test-mode tag can be driven to (`POST /v1/partners/test/tags/{tagId}/trigger`). */
export const TRIGGERABLE_TAG_EVENTS = ['tag.disconnected', 'tag.reconnected', 'tag.activated'] as const;
export const TriggerableTagEvent = z.enum(TRIGGERABLE_TAG_EVENTS).meta({
  id: 'TriggerableTagEvent',
  description:
    '`tag.disconnected`: a verified custom tag loses its record (as a health check finds it); `tag.reconnected`: ' +
    'the record is back; `tag.activated`: the tag receives its first event.',
  example: 'tag.disconnected',
});
export type TriggerableTagEvent = z.infer<typeof TriggerableTagEvent>;

export const TriggerTagInput = z
  .object({
    tagId: Uuid.meta({ description: 'The test-mode tag (UUID).', example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    event: TriggerableTagEvent,
  })
  .meta({ id: 'TriggerTagInput' });
export type TriggerTagInput = z.input<typeof TriggerTagInput>;
