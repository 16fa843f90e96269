import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { ExportEventsQuery } from '@partner/shared-schemas';
import type { AppDeps } from '../context.js';
import { errorResponse, isServerFailure, toAppError } from '../errors.js';
import { type EventExport, openEventExport } from '../services/events/export-events.js';
import { sendUnrouted } from './allowed-methods.js';
import { drained } from './drained.js';
import { clientOf } from './rate-limit.js';
import { sendError } from './respond.js';

/** `GET /v1/partners/events/export`: a merchant's events as NDJSON, streamed. */
export const EVENT_EXPORT_PATH = '/v1/partners/events/export';

/** gzip when the client accepts it (`Accept-Encoding: gzip`, not `gzip;q=0`). */
function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).toLowerCase();
  return value.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    if (coding?.trim() !== 'gzip') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Authenticates, validates and checks the merchant before the first byte (failures are the usual
 * JSON `{ message, code }`), then writes one NDJSON line per event (exactly the list's JSON for
 * it) and a final `{"complete":true,"count":N,"cursor":"..."}` line. Backpressure: the next batch
 * is read only after the socket (or the gzip stream) took the previous one, so a slow reader slows
 * the reads and memory stays at about one batch. A failure after the first byte ends the body with
 * `{"complete":false,"count":N,"error":{message,code}}` instead: a body without `complete: true`
 * at the end is cut, and `afterId` (the last line's `id`) resumes it.
 */
export async function handleEventExport(
  deps: AppDeps,
  req: IncomingMessage & { requestId: string },
  res: ServerResponse,
): Promise<void> {
  res.setHeader('cache-control', 'no-store');
  if (req.method !== 'GET') {
    sendUnrouted(res, EVENT_EXPORT_PATH, req.method ?? '');
    return;
  }
  let exported: EventExport;
  try {
    // One call of the key's budget, as every /v1/partners call (http/rate-limit.ts).
    const partner = await deps.limits.authenticate(req.headers.authorization, clientOf(req, res));
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parsed = ExportEventsQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success) throw toAppError(parsed.error);
    exported = await openEventExport(deps.db, partner, parsed.data, deps.cursorKey);
  } catch (error) {
    const appError = toAppError(error, { retrySafe: true });
    if (isServerFailure(appError)) {
      deps.logger.error({ err: error, requestId: req.requestId }, 'event export failed to open');
    }
    sendError(res, appError);
    return;
  }

  const gzip = acceptsGzip(req);
  res.writeHead(200, {
    'content-type': 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
    vary: 'Accept-Encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  // Level 1: the export is CPU-bound on the server; level 1 keeps most of gzip's gain on NDJSON.
  const out: NodeJS.WritableStream = gzip ? zlib.createGzip({ level: 1 }) : res;
  if (gzip) (out as zlib.Gzip).pipe(res);
  let closed = false;
  const onClose = () => {
    closed = true;
  };
  res.on('close', onClose);
  let count = 0;
  let tail: string;
  try {
    for (;;) {
      const next = await exported.batches.next();
      if (next.done) {
        tail = `${JSON.stringify(next.value)}\n`;
        break;
      }
      if (closed) return;
      count += next.value.count;
      // The write's callback: the batch's bytes are out, its buffer may hold a later batch.
      if (!out.write(next.value.lines, next.value.release)) await drained(out, res);
      if (closed) return;
    }
  } catch (error) {
    const appError = toAppError(error);
    deps.logger.error({ err: error, requestId: req.requestId }, 'event export failed');
    tail = `${JSON.stringify({ complete: false, count, error: errorResponse(appError).body })}\n`;
  } finally {
    res.off('close', onClose);
    if (closed) {
      await exported.batches.return(undefined as never).catch(() => {});
      if (gzip) (out as zlib.Gzip).destroy();
    }
  }
  if (!closed) out.end(tail);
}
