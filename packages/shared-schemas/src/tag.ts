import { z } from 'zod';
import { booleanInput, DomainInput, HostnameInput, Livemode, Timestamp, Uuid } from './common.js';
import { TagCheck } from './dns-check.js';

/** Tag status values (spec section 3). */
export const TagStatus = z.enum(['active', 'inactive', 'waiting_for_events']).meta({ id: 'TagStatus' });
export type TagStatus = z.infer<typeof TagStatus>;

/** The two kinds of domain a tag can live on (spec section 1). */
export const DomainType = z.enum(['preverified', 'custom']).meta({ id: 'DomainType' });
export type DomainType = z.infer<typeof DomainType>;

/** A tag as listed inside a merchant (spec 2.2), with the verification flags exposed (docs/decisions/tags-and-domains.md). */
export const TagSummary = z
  .object({
    hostname: z.string().meta({ description: 'Domain where the tag is installed.', example: 'acme-store.com' }),
    tagId: Uuid.meta({ example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    status: TagStatus,
    livemode: Livemode,
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
    name: z.string().meta({
      description: 'Record label, relative to the domain: `edge-` and six random characters.',
      example: 'edge-k3j9x2',
    }),
    value: z.string().meta({ description: 'Target host of the CNAME.', example: 'tags.partner-tags.example' }),
    ttl: z.number().int().min(0).meta({ description: 'Time to live of the record, in seconds.', example: 300 }),
  })
  .meta({ id: 'DnsRecord' });
export type DnsRecord = z.infer<typeof DnsRecord>;

/**
 * What the tag asks before it names a visitor (docs/decisions/consent.md): `none` (a cookie at once,
 * as before), `opt-in` (no cookie and no visitor id before `ptag('consent', 'granted')`), `opt-out`
 * (collects until `ptag('consent', 'denied')`, which stops it and clears the cookie).
 */
export const TagConsentMode = z.enum(['none', 'opt-in', 'opt-out']).meta({ id: 'TagConsentMode' });
export type TagConsentMode = z.infer<typeof TagConsentMode>;

const consentModeField = TagConsentMode.meta({
  description:
    "`none`: the muid cookie at once (the default). `opt-in`: no cookie and no visitor id before `ptag('consent', 'granted')`. " +
    "`opt-out`: collects until `ptag('consent', 'denied')`, which stops collection and clears the cookie.",
  example: 'opt-in',
});
const respectGpcField = z.boolean().meta({
  description:
    'In `opt-in` and `opt-out`: Global Privacy Control (`navigator.globalPrivacyControl`, `Sec-GPC: 1`) counts as denied. Default true.',
  example: true,
});
const cookielessField = z.boolean().meta({
  description:
    'Events without consent are still collected, with no cookie and no stored identifier: the visitor is a hash of a ' +
    'daily-rotating secret salt, the merchant, the IP address and the user agent (a new one each UTC day). Default: ' +
    'true for `opt-in`, false otherwise. With `none`, every event is collected this way.',
  example: true,
});

/** A tag's consent settings, as every tag output carries them. */
const TagConsentFields = { consentMode: consentModeField, respectGpc: respectGpcField, cookieless: cookielessField };

// Inputs take booleanInput() (literals) with the output field's description.
const inputBoolean = (field: z.ZodBoolean) =>
  booleanInput()
    .optional()
    .meta(field.meta() ?? {});
const consentInputFields = {
  consentMode: consentModeField.optional(),
  respectGpc: inputBoolean(respectGpcField),
  cookieless: inputBoolean(cookielessField),
};

export const TAG_CREATED_MESSAGE = 'New tag created successfully';
export const TAG_EXISTING_MESSAGE = 'Existing tag retrieved';

export const GenerateTagInput = z
  .object({
    merchantId: Uuid.meta({
      description: 'The merchant the tag is for.',
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    domain: DomainInput.meta({
      description:
        "The merchant's domain, without protocol or `www.`: under the partner's domain (preverified) or a registrable root domain (custom).",
      example: 'acme-store.com',
    }),
    ...consentInputFields,
  })
  .meta({
    id: 'GenerateTagInput',
    description: 'The consent settings apply to a new tag; an existing tag keeps its own (change them with PATCH).',
  });
export type GenerateTagInput = z.input<typeof GenerateTagInput>;

export const GenerateTagResponse = z
  .object({
    tagId: Uuid.meta({ example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    domain: z.string().meta({
      description:
        'The domain the tag is for. With "Existing tag retrieved" this is the existing tag\'s domain, which can differ from the one sent (one tag per merchant and domain type).',
      example: 'acme-store.com',
    }),
    record: DnsRecord,
    status: TagStatus,
    livemode: Livemode,
    message: z.enum([TAG_CREATED_MESSAGE, TAG_EXISTING_MESSAGE]),
    ...TagConsentFields,
  })
  .meta({ id: 'GenerateTagResponse' });
export type GenerateTagResponse = z.infer<typeof GenerateTagResponse>;

export const VerifyTagInput = z
  .object({
    tagId: Uuid.meta({ description: 'The tag to verify.', example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    subdomain: HostnameInput.meta({
      description: 'The domain the tag was generated for (where its CNAME record is published).',
      example: 'acme-store.com',
    }),
  })
  .meta({ id: 'VerifyTagInput' });
export type VerifyTagInput = z.input<typeof VerifyTagInput>;

export const VerifyTagResponse = z
  .object({ verified: z.boolean().meta({ example: true }) })
  .meta({ id: 'VerifyTagResponse' });
export type VerifyTagResponse = z.infer<typeof VerifyTagResponse>;

export const GetTagInput = z
  .object({
    tagId: Uuid.meta({ description: 'The tag (UUID) to return.', example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
  })
  .meta({ id: 'GetTagInput' });
export type GetTagInput = z.input<typeof GetTagInput>;

/**
 * One tag in full (`GET /v1/partners/tag/{tagId}`), also the `data` of every `tag.*` webhook:
 * its state, its record, and the monitor's view (last DNS check, next one).
 */
export const Tag = z
  .object({
    tagId: Uuid,
    merchantId: Uuid,
    livemode: Livemode,
    hostname: z.string().meta({
      description: "The tag's collector host (its CNAME name): the tag script and its events are served from it.",
      example: 'edge-k3j9x2.shop-example.com',
    }),
    domain: z.string().meta({ description: 'The domain the tag was generated for.', example: 'shop-example.com' }),
    domainType: DomainType,
    status: TagStatus,
    isConnected: z.boolean().meta({
      description: 'The CNAME was right at the last check (a verified tag whose record disappears is disconnected).',
    }),
    isVerified: z.boolean().meta({ description: 'Domain ownership was proven once (never reset).' }),
    record: DnsRecord,
    createdAt: Timestamp,
    verifiedAt: Timestamp.nullable(),
    firstEventAt: Timestamp.nullable(),
    lastEventAt: Timestamp.nullable(),
    lastCheck: TagCheck.nullable().meta({ description: 'The last DNS check (verify or monitor); null before any.' }),
    nextCheckAt: Timestamp.nullable().meta({
      description: 'When the monitor checks the record next; null when no check is scheduled.',
    }),
    ...TagConsentFields,
  })
  .meta({ id: 'Tag' });
export type Tag = z.infer<typeof Tag>;

export const DeleteTagInput = z
  .object({
    tagId: Uuid.meta({ description: 'The tag (UUID) to delete.', example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
  })
  .meta({ id: 'DeleteTagInput' });
export type DeleteTagInput = z.input<typeof DeleteTagInput>;

/** `DELETE /v1/partners/tag/{tagId}`: the tag is gone (its events stay with the merchant). */
export const DeleteTagResponse = z
  .object({
    tagId: Uuid.meta({ example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    deleted: z.literal(true),
  })
  .meta({ id: 'DeleteTagResponse' });
export type DeleteTagResponse = z.infer<typeof DeleteTagResponse>;

/** `PATCH /v1/partners/tag/{tagId}`: the tag's consent settings; what is left out stays as it is. */
export const UpdateTagInput = z
  .object({
    tagId: Uuid.meta({ description: 'The tag (UUID) to change.', example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    ...consentInputFields,
  })
  .refine(
    (input) => input.consentMode !== undefined || input.respectGpc !== undefined || input.cookieless !== undefined,
    {
      message: 'consentMode, respectGpc or cookieless is required',
    },
  )
  .meta({ id: 'UpdateTagInput' });
export type UpdateTagInput = z.input<typeof UpdateTagInput>;
