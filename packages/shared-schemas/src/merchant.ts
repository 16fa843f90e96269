import { z } from 'zod';
import { Livemode, Timestamp, Uuid } from './common.js';
import { Pagination, paginationQuery } from './pagination.js';
import { RetentionDays, RetentionDaysInput } from './retention.js';
import { canonicalTimeZone } from './stats.js';
import { TagSummary } from './tag.js';

export const MERCHANT_NAME_MAX = 255;
export const MERCHANTS_DEFAULT_LIMIT = 10;

/**
 * A merchant's IANA time zone (issue 53): where its week starts for the weekly digest. Any case or
 * alias, stored and answered under its canonical name (as the statistics' `timezone`).
 */
export const MerchantTimezoneInput = z
  .string({ message: 'must be a string' })
  .max(64)
  .transform((zone, ctx) => {
    const canonical = canonicalTimeZone(zone);
    if (canonical === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an IANA time zone such as Europe/Paris' });
      return z.NEVER;
    }
    return canonical;
  })
  .meta({
    description:
      'IANA time zone (default `UTC`), in any case or as an alias; stored as its canonical name. The weekly `stats.digest` goes out Monday 06:00 there and covers the week before, Monday to Sunday.',
    example: 'Europe/Paris',
  });

/** A merchant as returned by the list endpoint (spec 2.1). */
export const Merchant = z
  .object({
    merchantId: Uuid.meta({ example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c' }),
    name: z.string().meta({ example: 'Acme Store' }),
    createdAt: Timestamp,
    livemode: Livemode,
    retentionDays: RetentionDays.meta({
      description:
        "Days its events are kept; null: the partner's `defaultRetentionDays`, then the server's default (else forever).",
      example: 90,
    }),
    timezone: z.string().meta({
      description: "The merchant's IANA time zone (canonical name; default `UTC`): its weekly digest's week.",
      example: 'Europe/Paris',
    }),
    tags: z.array(TagSummary),
  })
  .meta({ id: 'Merchant' });
export type Merchant = z.infer<typeof Merchant>;

export const ListMerchantsQuery = z.object(paginationQuery(MERCHANTS_DEFAULT_LIMIT)).meta({ id: 'ListMerchantsQuery' });
export type ListMerchantsQuery = z.input<typeof ListMerchantsQuery>;

export const ListMerchantsResponse = z
  .object({
    merchants: z.array(Merchant),
    pagination: Pagination,
  })
  .meta({ id: 'ListMerchantsResponse' });
export type ListMerchantsResponse = z.infer<typeof ListMerchantsResponse>;

export const CreateMerchantInput = z
  .object({
    name: z
      .string({ message: 'is required and must be a string' })
      .trim()
      .min(1, { message: 'must not be empty' })
      .max(MERCHANT_NAME_MAX, { message: `must be at most ${MERCHANT_NAME_MAX} characters` })
      .meta({ example: 'Acme Store' }),
    timezone: MerchantTimezoneInput.optional(),
  })
  .meta({ id: 'CreateMerchantInput' });
export type CreateMerchantInput = z.input<typeof CreateMerchantInput>;

export const CreateMerchantResponse = z
  .object({
    merchantId: Uuid.meta({ description: 'The new merchant.', example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c' }),
  })
  .meta({ id: 'CreateMerchantResponse' });
export type CreateMerchantResponse = z.infer<typeof CreateMerchantResponse>;

const MerchantIdPath = Uuid.meta({
  description: 'The merchant (UUID).',
  example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
});

export const GetMerchantInput = z.object({ merchantId: MerchantIdPath }).meta({ id: 'GetMerchantInput' });
export type GetMerchantInput = z.input<typeof GetMerchantInput>;

export const UpdateMerchantInput = z
  .object({
    merchantId: MerchantIdPath,
    name: CreateMerchantInput.shape.name.optional(),
    retentionDays: RetentionDaysInput.optional().meta({
      description: 'Days its events are kept (1..3650); null: inherit the partner default.',
      example: 90,
    }),
    timezone: MerchantTimezoneInput.optional(),
  })
  .refine((input) => input.name !== undefined || input.retentionDays !== undefined || input.timezone !== undefined, {
    message: 'name, retentionDays or timezone is required',
  })
  .meta({ id: 'UpdateMerchantInput' });
export type UpdateMerchantInput = z.input<typeof UpdateMerchantInput>;

/** `DELETE /v1/partners/merchant/{merchantId}` (202): gone for every reader now, its data purged in the background. */
export const DeleteMerchantResponse = z
  .object({
    merchantId: Uuid.meta({ example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c' }),
    deleted: z.literal(true),
    purge: z.literal('pending').meta({
      description: 'Its events and aggregates are being removed; a `merchant.deleted` webhook follows when done.',
    }),
  })
  .meta({ id: 'DeleteMerchantResponse' });
export type DeleteMerchantResponse = z.infer<typeof DeleteMerchantResponse>;
