import { tracked } from '@trpc/server';
import { streamNames } from '../../http/event-stream.js';
import { parseLastEventId } from '../../services/events/open-stream.js';
import { findOwnMerchant } from '../../services/merchant/find-merchant.js';
import { partnerProcedure } from '../../trpc.js';
import { ZStreamEventsInput } from './stream.types.js';

/**
 * Live events of one merchant over SSE, in ingestion order, each `tracked(seq, event)`; a
 * reconnect with the last id resumes without gap or duplicate. Another partner's merchant fails
 * with MERCHANT_NOT_FOUND before any event.
 */
export const streamEventsRoute = partnerProcedure.input(ZStreamEventsInput).subscription(async function* ({
  ctx,
  input,
  signal,
}) {
  const names = streamNames(input.events);
  const afterSeq = parseLastEventId(input.lastEventId);
  await findOwnMerchant(ctx.db, ctx.partner, input.merchantId);
  const subscription = await ctx.streams.subscribe({ merchantId: input.merchantId, names, afterSeq });
  const onAbort = () => subscription.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) return;
    for await (const event of subscription) yield tracked(String(event.seq), event);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    subscription.close();
  }
});
