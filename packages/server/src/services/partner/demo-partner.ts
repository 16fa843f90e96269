import type { Database } from '../../db/client.js';
import type { Env } from '../../env.js';
import { countPartners } from './api-keys.js';
import { type OnboardedPartner, onboardPartner } from './onboard-partner.js';

export const DEMO_PARTNER = { name: 'Demo Partner', domain: 'demo-partner.example' } as const;

/**
 * First start on an empty embedded database: onboard a demo partner so a newcomer's first
 * command ends in a working call. Never with DATABASE_URL or NODE_ENV=production.
 */
export async function onboardDemoPartnerIfEmpty(
  db: Database,
  env: Env,
): Promise<(OnboardedPartner & { banner(url: string): string }) | null> {
  if ((await countPartners(db)) > 0) return null;
  const partner = await onboardPartner(db, DEMO_PARTNER, env.TAG_TARGET_HOST);
  return {
    ...partner,
    banner: (url) =>
      [
        '',
        `Partner Tags API on ${url} (embedded database in ${env.DATA_DIR})`,
        '',
        'First start: a demo partner was onboarded.',
        `  partner:  ${partner.name} (${partner.partnerId}), domain ${partner.domain}`,
        `  API key:  ${partner.apiKey}`,
        '            shown once; `pnpm partner rotate-key <partnerId>` issues a new one',
        '',
        'Try it:',
        `  curl -s -X POST ${url}/v1/partners/merchant \\`,
        `    -H 'Authorization: Bearer ${partner.apiKey}' \\`,
        `    -H 'Content-Type: application/json' -d '{"name":"Acme Store"}'`,
        '',
        `API reference: ${url}/openapi.json`,
        '',
      ].join('\n'),
  };
}
