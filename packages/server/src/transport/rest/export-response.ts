import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import type { AppDeps } from '../../context.js';
import { type EventExport, openEventExport } from '../../features/events/read/export-events.js';
import { AppError, errorResponse, toAppError } from '../../kernel/errors.js';
import type { EVENT_EXPORT_ROUTE } from '../../routes/events/export.route.js';
import type { HeldAccount } from '../../runtime/held-bytes.js';
import { drained } from '../http/drained.js';
import { markRateLimitScope } from '../http/rate-limit-scope.js';
import type { RouteContext } from '../http/run-route.js';

/** How long an export that ended may take to flush its last lines before the socket is destroyed. */
const FINAL_FLUSH_MS = 30_000;

/** The ending of an export whose reader went longest without reading when the process's budget was passed. */
function tooSlowError(): AppError {
  return new AppError(
    'STREAM_CONSUMER_TOO_SLOW',
    'The server holds too much for slow readers and this export went longest without reading; resume with afterId',
  );
}

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

/** Once the route's prologue authenticated the key and validated the query. */
export async function exportEvents(deps: AppDeps, context: RouteContext<typeof EVENT_EXPORT_ROUTE>): Promise<void> {
  await new ExportResponse(deps, context).run();
}

/** One export's response: what it holds, what may end it, and its body. */
class ExportResponse {
  private releaseSlot = () => {};
  private unwatch = () => {};
  private stopped: AppError | null = null;
  private onStopped = () => {};
  private readonly stopping: Promise<void>;
  // Bytes read for this export and not yet written out, in the process's budget (HELD_BYTES):
  // over it, this export may be the one ended (it holds about two batches at most, by construction).
  private readonly hold: HeldAccount;
  private closed = false;

  constructor(
    private readonly deps: AppDeps,
    private readonly context: RouteContext<typeof EVENT_EXPORT_ROUTE>,
  ) {
    this.stopping = new Promise<void>((resolve) => {
      this.onStopped = resolve;
    });
    this.hold = deps.heldBytes.open(Number.POSITIVE_INFINITY, () => this.stop(tooSlowError()));
  }

  async run(): Promise<void> {
    const { deps } = this;
    const { req, res, partner } = this.context;
    // Everything this export holds is given back when its socket is gone (also a client that left early).
    res.once('close', () => {
      this.unwatch();
      this.hold.close();
      this.releaseSlot();
    });
    // A client that left during the prologue: its 'close' has passed, nothing is taken.
    if (res.closed) {
      this.hold.close();
      return;
    }
    const exported = await this.open();
    const gzip = acceptsGzip(req);
    const out = this.startBody(gzip);
    res.on('close', this.onClose);
    // A revoked or expired key ends the export as it ends the key's streams (key-watch.ts).
    if (partner.key && !res.destroyed) this.unwatch = deps.keys.watch(partner.key, this.stop);
    const tail = await this.writeBatches(exported, out, gzip);
    if (tail === null) return;
    out.end(tail);
    // A reader that never reads again would hold the socket, its slot and its last batch forever.
    if (this.stopped && !res.writableFinished) {
      const timer = setTimeout(() => res.destroy(), FINAL_FLUSH_MS);
      timer.unref();
      res.once('finish', () => clearTimeout(timer));
    }
  }

  private readonly stop = (error: AppError): void => {
    this.stopped ??= error;
    this.onStopped();
  };

  private readonly onClose = (): void => {
    this.closed = true;
    this.onStopped();
  };

  /** Takes a slot and opens the export: its failures come before the first byte. */
  private async open(): Promise<EventExport> {
    const { deps, hold } = this;
    const { res, partner, query } = this.context;
    try {
      // Over a cap (EXPORT_MAX_PER_PARTNER, EXPORT_MAX_PER_PROCESS): 429 before anything is read.
      // The slot is held until the socket closes: a stalled reader's last batch is still held.
      try {
        this.releaseSlot = deps.exportCaps.take(partner.id);
      } catch (refused) {
        markRateLimitScope(res, 'exports');
        throw refused;
      }
      return await openEventExport(deps.reads, partner, query, deps.cursorKey, {
        batchBytes: deps.env.EXPORT_BATCH_BYTES,
        hold,
      });
    } catch (error) {
      // Answered by the route (transport/http/run-route.ts) as `{ message, code }`.
      this.releaseSlot();
      hold.close();
      throw error;
    }
  }

  private startBody(gzip: boolean): NodeJS.WritableStream {
    const { res } = this.context;
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
    return out;
  }

  /** Writes the batches; returns the last line (the summary, or the ending of a failure), or null once the client left. */
  private async writeBatches(exported: EventExport, out: NodeJS.WritableStream, gzip: boolean): Promise<string | null> {
    const { req, res } = this.context;
    let count = 0;
    let tail: string;
    let finished = false;
    try {
      for (;;) {
        const next = await exported.batches.next();
        if (this.stopped) throw this.stopped;
        if (next.done) {
          tail = `${JSON.stringify(next.value)}\n`;
          finished = true;
          break;
        }
        if (this.closed) return null;
        count += next.value.count;
        // The write's callback: the batch's bytes are out, its buffer may hold a later batch.
        if (!out.write(next.value.lines, next.value.release)) await Promise.race([drained(out, res), this.stopping]);
        if (this.closed) return null;
        if (this.stopped) throw this.stopped;
      }
    } catch (error) {
      const appError = toAppError(error);
      // A key revoked mid-way and a reader too far behind are expected endings, not failures.
      if (appError.reason !== 'STREAM_CONSUMER_TOO_SLOW' && appError.reason !== 'UNAUTHORIZED') {
        this.deps.logger.error({ err: error, requestId: req.requestId }, 'event export failed');
      }
      tail = `${JSON.stringify({ complete: false, count, error: errorResponse(appError).body })}\n`;
    } finally {
      res.off('close', this.onClose);
      if (!finished) await exported.batches.return(undefined as never).catch(() => {});
      if (this.closed && gzip) (out as zlib.Gzip).destroy();
    }
    return this.closed ? null : tail;
  }
}
