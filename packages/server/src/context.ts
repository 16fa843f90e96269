import type { AuthenticatedPartner } from './auth/authenticate.js';
import type { Database } from './db/client.js';
import type { CnameResolver } from './dns/cname-resolver.js';
import type { Env } from './env.js';
import type { Logger } from './logger.js';

/** What every request shares: built once at start. */
export interface AppDeps {
  db: Database;
  env: Env;
  logger: Logger;
  dns: CnameResolver;
}

export interface Context extends AppDeps {
  requestId: string;
  /** The raw Authorization header, authenticated by the partner middleware. */
  authorization: string | string[] | undefined;
  /** Set when the transport already authenticated the request (REST does, before reading the body). */
  partner: AuthenticatedPartner | null;
}
