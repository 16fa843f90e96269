import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import proxyAddr from 'proxy-addr';
import type { TrustProxy } from '../../kernel/env.js';

/** Who sent a request and over what, as every part of the server sees it. */
export interface ProxyTrust {
  /** The client address of a request. */
  address(req: IncomingMessage): string;
  /** True when the client reached us over https (TLS here, or at a trusted proxy). */
  https(req: IncomingMessage): boolean;
  /** The client's country as a trusted proxy's header says it (ISO 3166-1 alpha-2), else undefined. */
  country(req: IncomingMessage): string | undefined;
}

/** Country headers of the proxies and platforms that set one (Cloudflare, CloudFront, Vercel, App Engine, Fastly's convention). */
const COUNTRY_HEADERS = [
  'cf-ipcountry',
  'cloudfront-viewer-country',
  'x-vercel-ip-country',
  'x-appengine-country',
  'x-country-code',
];

/** Two letters; `XX` (unknown) and `T1` (Tor, Cloudflare) are not countries. */
function countryHeader(req: IncomingMessage): string | undefined {
  for (const name of COUNTRY_HEADERS) {
    const value = req.headers[name];
    if (typeof value !== 'string') continue;
    const code = value.trim().toUpperCase();
    return /^[A-Z]{2}$/.test(code) && code !== 'XX' && code !== 'T1' ? code : undefined;
  }
  return undefined;
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
  if (!trust) return { address: peerOf, https: socketIsTls, country: () => undefined };
  const fromTrustedPeer = (req: IncomingMessage) => {
    const peer = req.socket.remoteAddress;
    return peer !== undefined && trust(peer, 0);
  };
  return {
    country: (req) => (fromTrustedPeer(req) ? countryHeader(req) : undefined),
    address: (req) => (req.socket.remoteAddress === undefined ? 'unknown' : proxyAddr(req, trust)),
    https: (req) => {
      if (socketIsTls(req)) return true;
      if (!fromTrustedPeer(req)) return false;
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

/** The client's country from a trusted proxy's header (TRUST_PROXY), else undefined. */
export function clientCountry(req: IncomingMessage): string | undefined {
  return (trustOf.get(req) ?? UNTRUSTED).country(req);
}
