import { Resolver } from 'node:dns/promises';
import { AppError } from '../errors.js';

export type CnameLookup = { found: true; targets: string[] } | { found: false };

export interface CnameResolver {
  /** The CNAME targets of `name`, or `{ found: false }` when the name has no CNAME (NXDOMAIN, NODATA). */
  resolveCname(name: string): Promise<CnameLookup>;
}

export interface CnameResolverOptions {
  /** `ip[:port]` entries; empty or undefined: the system's resolvers. */
  servers?: string[];
  /** Total budget of one lookup, retry included. */
  timeoutMs: number;
}

/** Answers that mean "this name has no CNAME" rather than "DNS is not answering". */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'ENONAME']);

/**
 * CNAME lookups through node's c-ares Resolver: one retry at most, each try given half the
 * budget, and a hard deadline that cancels outstanding queries so no socket outlives the request.
 */
export function createCnameResolver(options: CnameResolverOptions): CnameResolver {
  const perTry = Math.max(50, Math.floor(options.timeoutMs / 2));
  return {
    async resolveCname(name) {
      const resolver = new Resolver({ timeout: perTry, tries: 2 });
      if (options.servers && options.servers.length > 0) resolver.setServers(options.servers);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          resolver.cancel();
          reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' }));
        }, options.timeoutMs + 50);
      });
      try {
        const targets = await Promise.race([resolver.resolveCname(name), deadline]);
        return targets.length > 0 ? { found: true, targets } : { found: false };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (NO_RECORD.has(code)) return { found: false };
        throw new AppError(
          'EXTERNAL_SERVICE_ERROR',
          `DNS verification service unavailable (${code === 'ECANCELLED' ? 'ETIMEOUT' : code || 'lookup failed'}); retry later`,
          { cause: error },
        );
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
