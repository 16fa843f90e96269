import { z } from 'zod';
import { booleanInput, Timestamp, Uuid } from './common.js';
import { isWellFormedText, WELL_FORMED_MESSAGE } from './text.js';

/** Longest visitor id (muid) the collector accepts, and so the longest one worth asking for. */
const VISITOR_ID_MAX = 128;

/** A visitor id as a request names it (erasure, `muid=` filter): 1..128 characters, no U+0000. */
export const VisitorId = z
  .string({ message: 'is required and must be a string' })
  .min(1, { message: 'must not be empty' })
  .max(VISITOR_ID_MAX, { message: `must be at most ${VISITOR_ID_MAX} characters` })
  .refine((value) => !value.includes('\u0000'), { message: 'must not contain U+0000' })
  .refine(isWellFormedText, { message: WELL_FORMED_MESSAGE })
  .meta({ description: 'The visitor id (muid), as events carry it.', example: 'muid_7d2f9a' });

export const ErasureStatus = z.enum(['pending', 'running', 'completed']).meta({
  id: 'ErasureStatus',
  description:
    '`pending`: accepted, not started; `running`: its events are being deleted and the statistics recounted; ' +
    '`completed`: done, `erasure.completed` sent.',
  example: 'pending',
});
export type ErasureStatus = z.infer<typeof ErasureStatus>;

export const CreateErasureInput = z
  .object({
    muid: VisitorId,
    merchantId: Uuid.optional().meta({
      description: "One of the partner's merchants; omitted: the visitor's events of every merchant of the partner.",
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    suppress: booleanInput()
      .optional()
      .meta({
        description:
          'true: events of this visitor (in the same scope) are dropped from now on, forever; the collector still ' +
          'answers as usual. Default false: dropped only until the erasure completes (in log mode until the event ' +
          'log cannot hold one sent before it).',
        example: false,
      }),
  })
  .meta({ id: 'CreateErasureInput' });
export type CreateErasureInput = z.input<typeof CreateErasureInput>;

export const Erasure = z
  .object({
    id: Uuid.meta({ description: 'The erasure.', example: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' }),
    muid: z.string().meta({ description: 'The visitor erased.', example: 'muid_7d2f9a' }),
    merchantId: Uuid.nullable().meta({
      description: 'The merchant it covers; null: every merchant of the partner.',
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    suppress: z.boolean().meta({ description: 'Whether the visitor stays suppressed after it completes.' }),
    status: ErasureStatus,
    eventsDeleted: z.number().int().min(0).meta({ description: 'Events deleted so far.', example: 0 }),
    createdAt: Timestamp,
    completedAt: Timestamp.nullable().meta({ description: 'When it completed; null before.' }),
  })
  .meta({ id: 'Erasure' });
export type Erasure = z.infer<typeof Erasure>;

export const GetErasureInput = z
  .object({
    erasureId: Uuid.meta({ description: 'The erasure (UUID).', example: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' }),
  })
  .meta({ id: 'GetErasureInput' });
export type GetErasureInput = z.input<typeof GetErasureInput>;
