import type { IncomingMessage } from 'node:http';
import { isIPv4 } from 'node:net';
import type { TLSSocket } from 'node:tls';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import type { TrustProxy } from '../../kernel/env.js';

/**
 * Who sent a request and over what, as every part of the server sees it (rate limits, the
 * collectors, the `muid` cookie's `Secure`): with TRUST_PROXY off, the socket's peer and whether
 * the socket is TLS; no header is ever read. With TRUST_PROXY on, `proxy-addr` (the library
 * Express uses) walks `X-Forwarded-For` from the right, past every trusted hop, to the first
 * untrusted address; `X-Forwarded-Proto` (its first value) decides https, but only when the socket's
 * peer itself is a trusted proxy. Decision: docs/decisions/rate-limits-and-quotas.md, "TRUST_PROXY".
 */
export interface ProxyTrust {
  /** The client address of a request. */
  address(req: IncomingMessage): string;
  /** True when the client reached us over https (TLS here, or at a trusted proxy). */
  https(req: IncomingMessage): boolean;
}

type TrustFn = (addr: string, hop: number) => boolean;

function trustFunction(setting: TrustProxy): TrustFn | null {
  switch (setting.kind) {
    case 'off':
      return null;
    case 'all':
      return () => true;
    case 'hops':
      // Express's semantics: the socket's peer is hop 0; N trusted hops in front of us.
      return (_addr, hop) => hop < setting.hops;
    case 'list':
      return proxyAddr.compile(setting.list);
  }
}

function peerOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

function socketIsTls(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true;
}

/** The request listener's view of TRUST_PROXY (built once per listener from the parsed env). */
export function createProxyTrust(setting: TrustProxy): ProxyTrust {
  const trust = trustFunction(setting);
  if (!trust) return { address: peerOf, https: socketIsTls };
  return {
    address: (req) => (req.socket.remoteAddress === undefined ? 'unknown' : proxyAddr(req, trust)),
    https: (req) => {
      if (socketIsTls(req)) return true;
      const peer = req.socket.remoteAddress;
      if (peer === undefined || !trust(peer, 0)) return false;
      const header = req.headers['x-forwarded-proto'];
      const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim().toLowerCase();
      return first === 'https';
    },
  };
}

const UNTRUSTED = createProxyTrust({ kind: 'off' });
const trustOf = new WeakMap<IncomingMessage, ProxyTrust>();

/** Set once per request by the listener (transport/http/server.ts) when TRUST_PROXY is on. */
export function setProxyTrust(req: IncomingMessage, trust: ProxyTrust): void {
  trustOf.set(req, trust);
}

/** The client address of a request (the socket's peer unless TRUST_PROXY says otherwise). */
export function clientAddress(req: IncomingMessage): string {
  return (trustOf.get(req) ?? UNTRUSTED).address(req);
}

/** True when the client's connection is https (TLS here, or X-Forwarded-Proto from a trusted proxy). */
export function clientUsesHttps(req: IncomingMessage): boolean {
  return (trustOf.get(req) ?? UNTRUSTED).https(req);
}

/** What a forwarded hop that is not an address keys as, at most (the store never gets a long header). */
const MAX_OTHER_KEY = 64;

/**
 * The key of an address's budgets (collector, auth failures): IPv4 as is, an IPv4-mapped IPv6
 * address as its IPv4, IPv6 by its /64 (what one subscriber is given: every /128 in it shares one
 * budget), a hop with a port (`1.2.3.4:5678`, `[2001:db8::1]:443`) without it, anything else (a
 * forwarded hop that is no address) as sent, cut short. docs/decisions/rate-limits-and-quotas.md.
 */
export function addressBudgetKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  if (ipaddr.IPv6.isValid(ip)) {
    const parsed = ipaddr.IPv6.parse(ip);
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
    const [a, b, c, d] = parsed.parts;
    return `${a!.toString(16)}:${b!.toString(16)}:${c!.toString(16)}:${d!.toString(16)}::/64`;
  }
  const withPort = /^(?:\[([^\]]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/.exec(ip);
  const bare = withPort?.[1] ?? withPort?.[2];
  if (bare && (isIPv4(bare) || ipaddr.IPv6.isValid(bare))) return addressBudgetKey(bare);
  return ip.length > MAX_OTHER_KEY ? ip.slice(0, MAX_OTHER_KEY) : ip;
}
