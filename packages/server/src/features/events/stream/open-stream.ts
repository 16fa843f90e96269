import { StreamEventsQuery } from '@partner/shared-schemas';
import type { Database } from '../../../db/client.js';
import { AppError } from '../../../kernel/errors.js';
import type { ApiKeys } from '../../../runtime/keys/api-keys.js';
import type { StreamCaps } from '../../../runtime/stream-caps.js';
import type { StreamHub } from '../../../runtime/stream-hub.js';
import { findOwnMerchant } from '../../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../../partners/authenticate.js';
import type { EventSubscription } from './subscription.js';

/** Parses a client's `Last-Event-ID`: a non-negative integer (the `seq` of the last event seen). */
function parseLastEventId(value: string | undefined | null): number | undefined {
  if (value === undefined || value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,15}$/.test(trimmed)) {
    throw new AppError('VALIDATION_ERROR', 'lastEventId (Last-Event-ID) must be the id of a streamed event');
  }
  return Number(trimmed);
}

/** Opens a live stream of one merchant's events for the partner: the one way both stream transports start one. */
export async function openEventStream(
  deps: { db: Database; streams: StreamHub<EventSubscription>; keys: ApiKeys; streamCaps?: StreamCaps | undefined },
  partner: AuthenticatedPartner,
  input: StreamEventsQuery,
): Promise<EventSubscription> {
  const query = StreamEventsQuery.parse(input);
  const afterSeq = parseLastEventId(query.lastEventId);
  // Over a cap: 429 before anything else happens (stream-caps.ts); the slot is held until the stream ends.
  const release = deps.streamCaps?.take(partner.id) ?? (() => {});
  try {
    await findOwnMerchant(deps.db, partner, query.merchantId);
    const subscription = await deps.streams.subscribe({ merchantId: query.merchantId, names: query.events, afterSeq });
    const unwatch = partner.key ? deps.keys.watch(partner.key, (error) => subscription.fail(error)) : () => {};
    const ended = () => {
      unwatch();
      release();
    };
    void subscription.ended.then(ended, ended);
    return subscription;
  } catch (error) {
    release();
    throw error;
  }
}
