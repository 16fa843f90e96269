import type { LookupAddress, LookupOptions } from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../kernel/errors.js';
import { WebhookLookupBusyError } from '../../kernel/lookup-errors.js';
import type { WebhookHostResolver } from '../../runtime/webhook-host-resolver.js';

/**
 * Webhook URL safety (docs/decisions/webhooks.md, "URL safety"): a partner-supplied URL must never make the
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
  /** The app's bounded, cancellable resolver (AppDeps.webhookResolver). */
  resolver: WebhookHostResolver;
}

/** The reason an address is refused, or null when it is a public unicast address. */
export function blockedAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range !== 'unicast') return range;
  // IPv4-compatible IPv6 (::/96, deprecated: ::127.0.0.1 is ::7f00:1) is "unicast" to ipaddr.js;
  // judge the IPv4 address it embeds.
  if (parsed.kind() === 'ipv6') {
    const bytes = parsed.toByteArray();
    if (bytes.slice(0, 12).every((byte) => byte === 0)) {
      const embedded = ipaddr.fromByteArray(bytes.slice(12)).range();
      if (embedded !== 'unicast') return `${embedded} (IPv4-compatible)`;
    }
  }
  return null;
}

class UnsafeWebhookAddressError extends Error {
  override name = 'UnsafeWebhookAddressError';
  readonly code = 'EWEBHOOKADDRESS';
}

function validation(rule: string): AppError {
  return new AppError('VALIDATION_ERROR', `url: ${rule}`);
}

/** Names that mean this machine whatever DNS says (RFC 6761 `localhost`, and common hosts-file aliases). */
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/** `host` without brackets or trailing dots, lower case. */
function isLocalName(host: string): boolean {
  const name = normaliseHost(host);
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost');
}

/**
 * Lower case, no IPv6 brackets, no trailing dots: `localhost.` and `foo.localhost..` are the same
 * names as `localhost` and `foo.localhost` (a fully qualified name), and every rule sees that form.
 */
function normaliseHost(host: string): string {
  return host
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '')
    .toLowerCase();
}

/** Host of a URL without IPv6 brackets or trailing dots. */
function bareHost(url: URL): string {
  return normaliseHost(url.hostname);
}

/**
 * Checks what can be checked without DNS: absolute URL, scheme, no credentials, and a literal
 * IP host or `localhost` name against the address rules. Returns the normalised URL.
 */
export function checkWebhookUrlSyntax(raw: string, options: Pick<UrlSafetyOptions, 'allowPrivate'>): URL {
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
 * A name that does not resolve (yet) is accepted: every send checks again. When every lookup slot
 * is taken the create is refused with 503 (retry shortly) rather than let through unchecked.
 */
export async function checkWebhookUrl(raw: string, options: UrlSafetyOptions): Promise<string> {
  const url = checkWebhookUrlSyntax(raw, options);
  const host = bareHost(url);
  if (!options.allowPrivate && net.isIP(host) === 0) {
    const addresses = await options.resolver.resolve(host).catch((error: unknown) => {
      if (error instanceof WebhookLookupBusyError) {
        throw new AppError('SERVICE_UNAVAILABLE', 'Too many webhook URL checks at once; retry shortly', {
          headers: { 'Retry-After': '1' },
        });
      }
      return [];
    });
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) {
        // The kind of address only: naming it would let a partner read the server's view of internal names.
        throw validation(
          `must not point at a loopback, private, link-local, metadata or reserved address (${host} resolves to a ${reason} address)`,
        );
      }
    }
  }
  return url.toString();
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** What `localhost` names are when private targets are allowed (they never reach DNS). */
const LOOPBACK_ADDRESSES: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * A `lookup` for the delivery connections (net/tls `connect` options): resolves the name through the
 * app's resolver (bounded and cancellable: host-resolver.ts), refuses the connection when any
 * address is not public, and hands the checked address to the socket, so the connection goes
 * exactly where the check looked (no second resolution to rebind).
 */
export function safeLookup(options: UrlSafetyOptions) {
  const { resolver } = options;
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    const host = normaliseHost(hostname);
    let pending: Promise<LookupAddress[]>;
    if (isLocalName(host)) {
      pending = options.allowPrivate
        ? Promise.resolve(LOOPBACK_ADDRESSES)
        : Promise.reject(
            new UnsafeWebhookAddressError(
              `refused: ${hostname} resolves to a non-public address (127.0.0.1, loopback)`,
            ),
          );
    } else {
      pending = resolver.resolve(host);
    }
    pending.then(
      (resolved) => {
        const family = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family;
        const addresses = family === 4 || family === 6 ? resolved.filter((a) => a.family === family) : resolved;
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
        if (!first) {
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        }
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
