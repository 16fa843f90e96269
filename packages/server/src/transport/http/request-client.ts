import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestVisitor } from '../../features/events/ingest/visitor-client.js';
import { MAX_BODY_BYTES } from '../../kernel/request-limits.js';
import { type RateLimitClient, UNKNOWN_BODY_BYTES } from '../../runtime/rate-limits.js';
import { clientAddress, clientCountry } from './client-address.js';

/** The client of an HTTP request (the socket's peer) answering on `res`. */
export function clientOf(req: IncomingMessage, res: ServerResponse): RateLimitClient {
  return {
    ip: clientIp(req),
    setHeader: (name, value) => {
      if (!res.headersSent) res.setHeader(name, value);
    },
    unchargedBytes: bodyBytesOf(req),
  };
}

/** The body size a request announces before any of it is read (Content-Length). */
function bodyBytesOf(req: IncomingMessage): number {
  const declared = req.headers['content-length'];
  if (declared !== undefined) {
    const bytes = Number(declared);
    return Number.isFinite(bytes) && bytes >= 0 ? Math.min(bytes, MAX_BODY_BYTES) : MAX_BODY_BYTES;
  }
  return req.headers['transfer-encoding'] === undefined ? 0 : UNKNOWN_BODY_BYTES;
}

/** The client address of a request: the socket's peer, or per TRUST_PROXY (client-address.ts). */
function clientIp(req: IncomingMessage): string {
  return clientAddress(req);
}

/** The visitor behind a request: its address (looked up, never kept), user agent and trusted country header. */
export function visitorOf(req: IncomingMessage): RequestVisitor {
  return { ip: clientIp(req), userAgent: req.headers['user-agent'], country: clientCountry(req) };
}
