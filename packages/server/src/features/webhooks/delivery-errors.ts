import { WEBHOOK_DELIVERY_ERRORS, type WebhookDeliveryError } from '@partner/shared-schemas';

/**
 * A failed attempt as the API reports it: a class, never the error's text (docs/decisions/webhooks.md, from
 * "Security round 2: issue 30 low and info findings"). Raw text (resolved addresses, certificate
 * names, the peer's messages) let a partner use its endpoint URL as a probe of hosts and ports;
 * the detail goes to the server's log only.
 */
export interface ClassifiedFailure {
  errorClass: WebhookDeliveryError;
  /** For the server log only. */
  detail: string;
}

const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'ENODATA',
  'ESERVFAIL',
  'ETIMEOUT',
  'ECANCELLED',
  'EREFUSED',
  'EBADRESP',
  'EFORMERR',
  'ENOTIMP',
  'EBADNAME',
  'EWEBHOOKDNSBUSY',
]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED']);

interface ErrorLike {
  name?: string;
  code?: string;
  syscall?: string;
  message?: string;
  reason?: string;
  cause?: ErrorLike;
}

function isTls(code: string, message: string): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code === 'EPROTO' ||
    /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code) ||
    /\b(ssl|tls)\b|certificate/i.test(message)
  );
}

/** The class of an attempt that threw (no HTTP answer), and its detail for the log. */
export function classifyDeliveryFailure(error: unknown): ClassifiedFailure {
  const e = (error ?? {}) as ErrorLike;
  const inner = e.cause ?? {};
  const code = e.code ?? inner.code ?? '';
  const syscall = e.syscall ?? inner.syscall ?? '';
  const message = String(e.message ?? error).slice(0, 300);
  const detail = code && !message.includes(code) ? `${code}: ${message}` : message;
  let errorClass: WebhookDeliveryError;
  // A URL our rules refuse: refused at send time (the address it resolves to, or the URL itself).
  if (code === 'EWEBHOOKADDRESS' || e.reason === 'VALIDATION_ERROR') errorClass = 'blocked_address';
  else if (e.name === 'TimeoutError' || inner.name === 'TimeoutError' || TIMEOUT_CODES.has(code))
    errorClass = 'timeout';
  // c-ares reports "cannot reach the DNS server" as ECONNREFUSED too: its syscall names the query.
  else if (DNS_CODES.has(code) || syscall.startsWith('query') || syscall === 'getaddrinfo') errorClass = 'dns';
  else if (code === 'ECONNREFUSED') errorClass = 'connection_refused';
  else if (RESET_CODES.has(code)) errorClass = 'connection_reset';
  else if (isTls(code, `${message} ${inner.message ?? ''}`)) errorClass = 'tls';
  else errorClass = 'network';
  return { errorClass, detail };
}

const CLASSES: ReadonlySet<string> = new Set<WebhookDeliveryError>(WEBHOOK_DELIVERY_ERRORS);

/**
 * The class of a stored `last_error`: new rows hold the class; rows written before classes held
 * the error's text (kept until retention deletes them), which is classed here and never shown.
 */
export function deliveryErrorOf(stored: string | null): WebhookDeliveryError | null {
  if (stored === null) return null;
  if (CLASSES.has(stored)) return stored as WebhookDeliveryError;
  if (/^HTTP \d{3}/.test(stored)) return 'http_status';
  if (stored.startsWith('refused')) return 'blocked_address';
  if (stored.startsWith('no complete answer within')) return 'timeout';
  if (stored === 'webhook endpoint deleted') return 'endpoint_deleted';
  const code = /^([A-Z_0-9]+):/.exec(stored)?.[1] ?? '';
  if (DNS_CODES.has(code)) return 'dns';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (RESET_CODES.has(code)) return 'connection_reset';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (isTls(code, stored)) return 'tls';
  return 'network';
}
