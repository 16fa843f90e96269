import { tracked } from '@trpc/server';
import { openEventStream } from '../../features/events/stream/open-stream.js';
import { partnerProcedure, trpcErrorOf } from '../procedures.js';
import { ZStreamEventsInput } from './stream.types.js';

/** Live events of one merchant over SSE, in ingestion order, each `tracked(seq, event)`. */
export const streamEventsRoute = partnerProcedure.input(ZStreamEventsInput).subscription(async function* ({
  ctx,
  input,
  signal,
}) {
  // A subscription's failures do not pass the procedures' middleware: mapped to tRPC's codes here.
  const subscription = await openEventStream(ctx, ctx.partner, input).catch((error: unknown) => {
    throw trpcErrorOf(error);
  });
  const onAbort = () => subscription.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) return;
    for await (const event of subscription) yield tracked(String(event.seq), event);
  } catch (error) {
    throw trpcErrorOf(error);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    subscription.close();
  }
});
