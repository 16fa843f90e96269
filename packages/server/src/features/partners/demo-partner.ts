import type { Database } from '../../db/client.js';
import type { Env } from '../../kernel/env.js';
import { countPartners } from './key-admin.js';
import { type OnboardedPartner, onboardPartner } from './onboard-partner.js';

const DEMO_PARTNER = { name: 'Demo Partner', domain: 'demo-partner.example' } as const;

/** First start on an empty embedded database. Never with DATABASE_URL or NODE_ENV=production. */
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
        `  Test key: ${partner.testApiKey}  (test mode: its own data, simulated DNS; README "Test mode")`,
        `            shown once; lost them? stop the server, then \`pnpm partner rotate-key ${partner.partnerId} [--mode test]\``,
        '',
        'Try it (creates a merchant, answers 201):',
        `  curl -s -X POST ${url}/v1/partners/merchant \\`,
        `    -H 'Authorization: Bearer ${partner.apiKey}' \\`,
        `    -H 'Content-Type: application/json' -d '{"name":"Acme Store"}'`,
        '',
        'Run the examples in another terminal, at the repository root (the test key: no DNS to publish):',
        `  export PARTNER_API_KEY=${partner.testApiKey}${url === 'http://localhost:3000' ? '' : ` PARTNER_BASE_URL=${url}`}`,
        '  pnpm example:sdk    # or example:shop (a demo shop page on your collector), example:rest... (examples/README.md)',
        '',
        `API reference, every call runnable from the browser: ${url}/docs (document: ${url}/openapi.json)`,
        '',
      ].join('\n'),
  };
}

/** The banner of a later start: the key was shown once, at the first start, so say how to get a new one. */
export function restartBanner(url: string, where: string, embedded: boolean): string {
  return [
    '',
    `Partner Tags API on ${url} (${where})`,
    '',
    `API reference, every call runnable from the browser: ${url}/docs`,
    embedded
      ? 'Need an API key? Keys are shown once. Stop the server, then `pnpm partner list` (partner ids) and\n' +
        '`pnpm partner rotate-key <partnerId> [--mode test]` (a new key), or `pnpm partner onboard --name ... --domain ...`.'
      : 'Need an API key? `pnpm partner rotate-key <partnerId>` (ids: `pnpm partner list`), with this DATABASE_URL.',
    '',
  ].join('\n');
}
