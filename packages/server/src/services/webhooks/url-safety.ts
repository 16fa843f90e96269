import type { LookupAddress, LookupOptions } from 'node:dns';
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../errors.js';

/**
 * Webhook URL safety (docs/decisions.md, "Webhooks"): a partner-supplied URL must never make the
 * server call into its own network. Only `https`, no credentials, and only public unicast
 * addresses: loopback, private (RFC 1918, ULA), link-local (cloud metadata 169.254.169.254,
 * fd00:ec2::254), carrier-grade NAT, multicast, documentation and other reserved ranges are
 * refused. Checked when the endpoint is created and again on every send, on the address the
 * connection really goes to (`safeLookup`), so a name that resolves elsewhere later (DNS
 * rebinding) is caught. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS) lifts the address and
 * scheme rules for development and tests.
 */
export interface UrlSafetyOptions {
  allowPrivate: boolean;
}

/** The reason an address is refused, or null when it is a public unicast address. */
export function blockedAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

export class UnsafeWebhookAddressError extends Error {
  override name = 'UnsafeWebhookAddressError';
  readonly code = 'EWEBHOOKADDRESS';
}

function validation(rule: string): AppError {
  return new AppError('VALIDATION_ERROR', `url: ${rule}`);
}

function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * Checks what can be checked without DNS: absolute URL, scheme, no credentials, and a literal
 * IP host or `localhost` name against the address rules. Returns the normalised URL.
 */
export function checkWebhookUrlSyntax(raw: string, options: UrlSafetyOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validation('must be an absolute URL such as https://hooks.example.com/partner-tags');
  }
  const allowedSchemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowedSchemes.includes(url.protocol)) {
    throw validation(
      options.allowPrivate ? 'must use http or https' : 'must use https (rule: https only; http is refused)',
    );
  }
  if (url.username || url.password) throw validation('must not contain credentials (user:password@)');
  if (url.hash) throw validation('must not contain a fragment (#...)');
  if (!options.allowPrivate) {
    const host = bareHost(url);
    if (isLocalName(host)) throw validation(`must not point at a loopback host (${host})`);
    if (net.isIP(host) !== 0) {
      const reason = blockedAddressReason(host);
      if (reason) {
        throw validation(
          `must not point at a loopback, private, link-local, metadata or reserved address (${host} is ${reason})`,
        );
      }
    }
  }
  return url;
}

/**
 * Create-time check: the syntax rules, then the host's current addresses (each must be public).
 * A name that does not resolve (yet) is accepted: every send checks again.
 */
export async function checkWebhookUrl(raw: string, options: UrlSafetyOptions, timeoutMs = 2000): Promise<string> {
  const url = checkWebhookUrlSyntax(raw, options);
  const host = bareHost(url);
  if (!options.allowPrivate && net.isIP(host) === 0) {
    const addresses = await lookupAll(host, timeoutMs).catch(() => []);
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) {
        throw validation(
          `must not point at a loopback, private, link-local, metadata or reserved address (${host} resolves to ${address}, ${reason})`,
        );
      }
    }
  }
  return url.toString();
}

function lookupAll(host: string, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), timeoutMs);
    dns.lookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(addresses);
    });
  });
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the delivery connections (net/tls `connect` options): resolves the name, refuses
 * the connection when any address is not public, and hands the checked address to the socket, so
 * the connection goes exactly where the check looked (no second resolution to rebind).
 */
export function safeLookup(options: UrlSafetyOptions) {
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!options.allowPrivate) {
        for (const { address } of addresses) {
          const reason = blockedAddressReason(address);
          if (reason) {
            return callback(
              new UnsafeWebhookAddressError(
                `refused: ${hostname} resolves to a non-public address (${address}, ${reason})`,
              ),
              [],
            );
          }
        }
      }
      if (lookupOptions.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}
