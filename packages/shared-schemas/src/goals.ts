import { z } from 'zod';
import { Timestamp, Uuid } from './common.js';
import { EventName } from './event.js';
import { isNulFree, isWellFormedText, NUL_MESSAGE, WELL_FORMED_MESSAGE } from './text.js';

/** Goals a merchant has at most. */
export const GOALS_MAX = 100;

const MerchantId = Uuid.meta({
  description: 'The merchant (UUID, one of the partner’s merchants).',
  example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
});
const GoalId = Uuid.meta({ description: 'The goal (UUID).', example: '0b8e7c2a-3f5d-4e1b-9a6c-7d8e9f0a1b2c' });

/** A page path pattern: `*` stands for any text within a segment, `**` for any across segments. */
const PathPattern = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^\/[^\s]*$/, { message: 'must start with / and hold no spaces' })
  .refine(isNulFree, { message: NUL_MESSAGE })
  .meta({
    description: 'Page views whose path matches: `*` any text within a segment, `**` any across segments.',
    example: '/checkout/**/done',
  });

export const Goal = z
  .object({
    goalId: GoalId,
    merchantId: Uuid,
    name: z.string().meta({ example: 'Signed up' }),
    eventName: z.string().nullable().meta({ description: 'Events of this name convert; null for a path goal.' }),
    pathPattern: z
      .string()
      .nullable()
      .meta({ description: 'Page views of matching paths convert; null for an event goal.' }),
    createdAt: Timestamp,
  })
  .meta({ id: 'Goal' });
export type Goal = z.infer<typeof Goal>;

export const CreateGoalInput = z
  .object({
    merchantId: MerchantId,
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .refine(isWellFormedText, { message: WELL_FORMED_MESSAGE })
      .refine(isNulFree, { message: NUL_MESSAGE })
      .meta({ example: 'Signed up' }),
    eventName: EventName.optional().meta({ description: 'Events of this name convert.', example: 'SignUp' }),
    // Out of the body's example, which the document builds from its fields': a goal takes one of the two.
    pathPattern: PathPattern.optional().meta({ 'x-omit-from-example': true }),
  })
  .superRefine((value, ctx) => {
    if ((value.eventName === undefined) === (value.pathPattern === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['eventName'], message: 'give exactly one of eventName and pathPattern' });
    }
  })
  .meta({ id: 'CreateGoalInput' });
export type CreateGoalInput = z.input<typeof CreateGoalInput>;

export const MerchantGoalsInput = z.object({ merchantId: MerchantId }).meta({ id: 'MerchantGoalsInput' });
export type MerchantGoalsInput = z.input<typeof MerchantGoalsInput>;

export const ListGoalsResponse = z
  .object({ goals: z.array(Goal).meta({ description: `Oldest first; at most ${GOALS_MAX}.` }) })
  .meta({ id: 'ListGoalsResponse' });
export type ListGoalsResponse = z.infer<typeof ListGoalsResponse>;

export const GoalIdInput = z.object({ merchantId: MerchantId, goalId: GoalId }).meta({ id: 'GoalIdInput' });
export type GoalIdInput = z.input<typeof GoalIdInput>;

export const DeleteGoalResponse = z.void().meta({ id: 'DeleteGoalResponse' });

/**
 * A path pattern as an anchored RE2 expression (ClickHouse's `match`): `**` any text, `*` any
 * text but `/`, everything else literal.
 */
export function pathPatternRegex(pattern: string): string {
  const literal = (text: string) => text.replace(/[\\^$.|?+()[\]{}]/g, (c) => `\\${c}`);
  return `^${pattern
    .split('**')
    .map((part) => part.split('*').map(literal).join('[^/]*'))
    .join('.*')}$`;
}
