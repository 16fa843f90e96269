import type { ServerResponse } from 'node:http';
import type { AppDeps } from '../../context.js';
import { openEventStream } from '../../features/events/stream/open-stream.js';
import type { SerializedEvent } from '../../features/events/stream/subscription.js';
import { errorResponse, toAppError } from '../../kernel/errors.js';
import type { EVENT_STREAM_ROUTE } from '../../routes/events/stream.route.js';
import { drained } from '../http/drained.js';
import type { RouteContext } from '../http/run-route.js';

/** How long a stream that ended may take to flush its last frames before the socket is destroyed. */
const FINAL_FLUSH_MS = 30_000;

/** One SSE frame for an event, its JSON written as the subscription holds it; false when the socket is full. */
function writeEvent(res: ServerResponse, event: SerializedEvent): boolean {
  res.cork();
  res.write(`id: ${event.seq}\nevent: event\ndata: `);
  res.write(event.json);
  const more = res.write('\n\n');
  res.uncork();
  return more;
}

/** The final frame of a stream that ends with an error: `event: error` with the `{ message, code }` body. */
function errorFrame(error: unknown): string {
  const appError = toAppError(error, { retrySafe: true });
  const { body } = errorResponse(appError);
  const retryAfter = Object.entries(appError.headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after')?.[1];
  const retry = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? `retry: ${Number(retryAfter) * 1000}\n` : '';
  return `${retry}event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

/**
 * The REST event stream: every failure before the first byte is a JSON `{ message, code }`; then frames flow
 * with backpressure and pings, and a failure ends it with an `event: error` frame.
 */
export async function streamEvents(
  deps: AppDeps,
  { req, res, partner, query }: RouteContext<typeof EVENT_STREAM_ROUTE>,
): Promise<void> {
  const subscription = await openEventStream(deps, partner, query);
  const onClose = () => subscription.close();
  res.on('close', onClose);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  req.socket.setNoDelay(true);
  res.write(': connected\n\n');
  const ping = setInterval(() => {
    if (res.writableLength === 0) res.write(': ping\n\n');
  }, deps.env.STREAM_PING_MS);
  try {
    for await (const event of subscription.serialized()) {
      if (res.destroyed) break;
      // A full socket: wait until it drains, or until the subscription ends (overflow, shutdown).
      if (!writeEvent(res, event)) await Promise.race([drained(res, res), subscription.ended]);
    }
  } catch (error) {
    const appError = toAppError(error);
    // A slow consumer, a key revoked or expired mid-stream (key-watch.ts) and a shutdown are expected endings.
    const shutdown = appError.reason === 'SERVICE_UNAVAILABLE' && deps.streams.isClosed;
    if (appError.reason !== 'STREAM_CONSUMER_TOO_SLOW' && appError.reason !== 'UNAUTHORIZED' && !shutdown) {
      deps.logger.error({ err: error, requestId: req.requestId }, 'event stream failed');
    }
    if (!res.destroyed) res.write(errorFrame(appError));
  } finally {
    clearInterval(ping);
    res.off('close', onClose);
    subscription.close();
    res.end();
    if (!res.destroyed) {
      // A consumer that never reads again would hold the socket (and its bounded backlog) forever.
      if (!res.writableFinished) {
        const timer = setTimeout(() => res.destroy(), FINAL_FLUSH_MS);
        timer.unref();
        res.once('finish', () => clearTimeout(timer));
      }
    }
  }
}
