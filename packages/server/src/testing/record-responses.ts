import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';

/** One REST response as the test suite received it, for the OpenAPI contract check. */
export interface RecordedResponse {
  method: string;
  /** Path without the query string, as requested. */
  path: string;
  /** The request target as sent (path and query), for diagnostics. */
  url?: string;
  status: number;
  contentType: string | null;
  /** `Content-Encoding` of the body (e.g. `gzip`): such a body is recorded as sent, not decoded. */
  contentEncoding?: string | null;
  /** The body text (empty for HEAD and bodiless answers). */
  body: string;
}

/** Bodies larger than this are not recorded (none of the API's answers comes close). */
const MAX_RECORDED_BYTES = 2 * 1024 * 1024;

/** Test harness only: records every REST response `server` sends into `<dir>/<pid>-<random>.jsonl`. */
export function recordResponses(server: Server, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}-${randomBytes(4).toString('hex')}.jsonl`);
  server.prependListener('request', (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    if (!pathname.toLowerCase().startsWith('/v1/')) return;
    const chunks: Buffer[] = [];
    let size = 0;
    let recorded = false;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      // A copy of the bytes as they are now: a writer may fill the same buffer again once the write's callback has run
      // (the export reuses its batch buffers), so a kept reference would record later bytes.
      const buffer =
        chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      size += buffer.length;
      if (size <= MAX_RECORDED_BYTES) chunks.push(buffer);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      const result = end(...args);
      if (!recorded && size <= MAX_RECORDED_BYTES) {
        recorded = true;
        const contentType = res.getHeader('content-type');
        const record: RecordedResponse = {
          method: req.method ?? 'GET',
          path: pathname,
          url: (req.url ?? '/').slice(0, 500),
          status: res.statusCode,
          contentType: contentType === undefined ? null : String(contentType),
          contentEncoding: res.hasHeader('content-encoding') ? String(res.getHeader('content-encoding')) : null,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        appendFileSync(file, `${JSON.stringify(record)}\n`);
      }
      return result;
    }) as typeof res.end;
  });
  return file;
}
