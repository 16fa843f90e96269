// Merchant sessions: the SDK's types equal the server's schemas, and a MerchantClient offers only
// what a session may call.
import type * as Schemas from '@partner/shared-schemas';
import { describe, expectTypeOf, it } from 'vitest';
import type * as Sdk from '../src/index.js';

describe('merchant session types', () => {
  it('match @partner/shared-schemas', () => {
    expectTypeOf<Sdk.MerchantSession>().toEqualTypeOf<Schemas.MerchantSession>();
    expectTypeOf<Sdk.MerchantSessionCreateParams>().toMatchTypeOf<
      Omit<Schemas.CreateMerchantSessionInput, 'allowedOrigins'> & { allowedOrigins: readonly string[] }
    >();
  });

  it('MerchantClient has the stats and tag status, nothing else', () => {
    expectTypeOf<keyof Sdk.MerchantClient>().toEqualTypeOf<'baseURL' | 'maxRetries' | 'timeout' | 'stats' | 'tags'>();
    expectTypeOf<keyof Sdk.MerchantTags>().toEqualTypeOf<'retrieve'>();
    expectTypeOf<Sdk.MerchantClient['stats']>().toEqualTypeOf<Sdk.Stats>();
  });
});
