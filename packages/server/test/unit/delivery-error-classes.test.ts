// The classes a failed webhook attempt is reported as (features/webhooks/delivery-errors.ts): the
// cases the integration test (test/security/delivery-error-classes.test.ts) cannot provoke on
// loopback, and the text of rows written before classes.
import { describe, expect, it } from 'vitest';
import { classifyDeliveryFailure, deliveryErrorOf } from '../../src/features/webhooks/delivery-errors.js';

const err = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? 'x')), fields);

describe('classifyDeliveryFailure', () => {
  it.each([
    [err({ code: 'ECONNREFUSED', syscall: 'queryA', message: 'queryA ECONNREFUSED hooks.example.com' }), 'dns'],
    [
      err({ code: 'ECONNREFUSED', syscall: 'connect', message: 'connect ECONNREFUSED 10.1.2.3:5432' }),
      'connection_refused',
    ],
    [err({ code: 'ETIMEOUT', syscall: 'queryAaaa' }), 'dns'],
    [err({ code: 'ECANCELLED' }), 'dns'],
    [err({ code: 'EWEBHOOKDNSBUSY' }), 'dns'],
    [
      err({ code: 'EWEBHOOKADDRESS', message: 'refused: x resolves to a non-public address (10.0.0.1, private)' }),
      'blocked_address',
    ],
    [err({ reason: 'VALIDATION_ERROR', message: 'url: must use https' }), 'blocked_address'],
    [err({ name: 'TimeoutError' }), 'timeout'],
    [err({ code: 'UND_ERR_CONNECT_TIMEOUT' }), 'timeout'],
    [err({ code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' }), 'tls'],
    [
      err({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: "Hostname/IP does not match certificate's altnames" }),
      'tls',
    ],
    [err({ code: 'UND_ERR_SOCKET', message: 'other side closed' }), 'connection_reset'],
    [err({ code: 'EHOSTUNREACH', message: 'connect EHOSTUNREACH 203.0.113.9:443' }), 'network'],
    [new TypeError('fetch failed', { cause: err({ code: 'ECONNRESET' }) }), 'connection_reset'],
  ])('%s -> %s', (error, expected) => {
    const { errorClass, detail } = classifyDeliveryFailure(error);
    expect(errorClass).toBe(expected);
    // The detail (for the log) keeps what happened.
    expect(detail.length).toBeGreaterThan(0);
  });
});

describe('deliveryErrorOf: rows stored before classes are classed, never shown', () => {
  it.each([
    [null, null],
    ['http_status', 'http_status'],
    ['HTTP 503', 'http_status'],
    ['no complete answer within 10000 ms', 'timeout'],
    ['refused: url: must not point at a loopback ... (127.0.0.1 is loopback)', 'blocked_address'],
    ['webhook endpoint deleted', 'endpoint_deleted'],
    ['ENOTFOUND: getaddrinfo ENOTFOUND hooks.internal', 'dns'],
    ['ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:5432', 'connection_refused'],
    ['UND_ERR_SOCKET: other side closed', 'connection_reset'],
    ['CERT_HAS_EXPIRED: certificate has expired', 'tls'],
    ['EPROTO: write EPROTO ... wrong version number', 'tls'],
    ['something else entirely', 'network'],
  ])('%s -> %s', (stored, expected) => {
    expect(deliveryErrorOf(stored)).toBe(expected);
  });
});
