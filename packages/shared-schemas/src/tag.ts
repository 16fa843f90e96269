import { z } from 'zod';
import { DomainInput, HostnameInput, Timestamp, Uuid } from './common.js';

/** Tag status values (spec section 3). */
export const TagStatus = z.enum(['active', 'inactive', 'waiting_for_events']).meta({ id: 'TagStatus' });
export type TagStatus = z.infer<typeof TagStatus>;

/** The two kinds of domain a tag can live on (spec section 1). */
export const DomainType = z.enum(['preverified', 'custom']).meta({ id: 'DomainType' });
export type DomainType = z.infer<typeof DomainType>;

/** A tag as listed inside a merchant (spec 2.2), with the verification flags exposed (decisions.md). */
export const TagSummary = z
  .object({
    hostname: z.string().meta({ description: 'Domain where the tag is installed.' }),
    tagId: Uuid,
    status: TagStatus,
    createdAt: Timestamp,
    isConnected: z.boolean().meta({ description: 'Set by a successful DNS verification.' }),
    isVerified: z.boolean().meta({ description: 'Set by a successful DNS verification.' }),
  })
  .meta({ id: 'TagSummary' });
export type TagSummary = z.infer<typeof TagSummary>;

/** The DNS record the domain owner publishes (spec 2.3). */
export const DnsRecord = z
  .object({
    type: z.literal('CNAME'),
    name: z.string().meta({ description: 'Record label, relative to the domain.', example: 'mtag' }),
    value: z.string().meta({ description: 'Target host of the CNAME.', example: 'tags.partner-tags.example' }),
    ttl: z.number().int().meta({ example: 300 }),
  })
  .meta({ id: 'DnsRecord' });
export type DnsRecord = z.infer<typeof DnsRecord>;

export const TAG_CREATED_MESSAGE = 'New tag created successfully';
export const TAG_EXISTING_MESSAGE = 'Existing tag retrieved';

export const GenerateTagInput = z
  .object({
    merchantId: Uuid,
    domain: DomainInput,
  })
  .meta({ id: 'GenerateTagInput' });
export type GenerateTagInput = z.input<typeof GenerateTagInput>;

export const GenerateTagResponse = z
  .object({
    tagId: Uuid,
    record: DnsRecord,
    status: TagStatus,
    message: z.enum([TAG_CREATED_MESSAGE, TAG_EXISTING_MESSAGE]),
  })
  .meta({ id: 'GenerateTagResponse' });
export type GenerateTagResponse = z.infer<typeof GenerateTagResponse>;

export const VerifyTagInput = z
  .object({
    tagId: Uuid,
    subdomain: HostnameInput,
  })
  .meta({ id: 'VerifyTagInput' });
export type VerifyTagInput = z.input<typeof VerifyTagInput>;

export const VerifyTagResponse = z.object({ verified: z.boolean() }).meta({ id: 'VerifyTagResponse' });
export type VerifyTagResponse = z.infer<typeof VerifyTagResponse>;
