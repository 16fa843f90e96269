import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { SERVER_DIR, startTestServer, TEST_TARGET_HOST, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';

/**
 * Finding 10 of the security round: onboarding accepted a public suffix (`--domain co.uk`) or
 * another partner's sub-domain as a partner domain, and `bbc.co.uk` then generated an immediately
 * active, "preverified" tag. A partner domain must be registrable and must not overlap another
 * partner's domain (inside it, or a parent of it).
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const onboard = (domain: string) => onboardPartner(server.app.deps.db, { name: 'Claimer', domain }, TEST_TARGET_HOST);
const unique = () => `sec10-${Math.random().toString(36).slice(2, 10)}`;

describe('finding 10: partner domains one party can own, without overlap', () => {
  it.each([
    ['co.uk', /co\.uk is a public suffix/],
    ['github.io', /github\.io is a public suffix/],
    ['intranet.local', /does not end in a known public suffix/],
  ])('refuses %s, naming the rule', async (domain, rule) => {
    await expect(onboard(domain)).rejects.toMatchObject({
      reason: 'VALIDATION_ERROR',
      message: expect.stringMatching(rule),
    });
  });

  it('refuses top-level names (the input schema already wants a dot)', async () => {
    for (const domain of ['com', 'example', 'localhost']) {
      await expect(onboard(domain)).rejects.toMatchObject({ reason: 'VALIDATION_ERROR' });
    }
  });

  it("refuses a domain inside another partner's domain, and a parent of one", async () => {
    const root = `${unique()}.co.uk`;
    const first = await onboard(root);
    expect(first.domain).toBe(root);
    await expect(onboard(`bbc.${root}`)).rejects.toMatchObject({
      reason: 'VALIDATION_ERROR',
      message: `domain: bbc.${root} is inside another partner's domain`,
    });
    const child = `shop.${unique()}.com`;
    await onboard(child);
    await expect(onboard(child.slice('shop.'.length))).rejects.toMatchObject({
      message: `domain: ${child.slice('shop.'.length)} is a parent of another partner's domain`,
    });
    // Siblings and look-alikes are not overlaps: `x${root}` does not end in `.${root}`.
    await expect(onboard(`x${root}`)).resolves.toMatchObject({ domain: `x${root}` });
    await expect(onboard(`other.${child.slice('shop.'.length)}`)).resolves.toBeTruthy();
  });

  it('accepts registrable domains, private-suffix names and the reserved documentation names', async () => {
    for (const domain of [`${unique()}.com`, `${unique()}.co.uk`, `${unique()}.github.io`, `${unique()}.example`]) {
      await expect(onboard(domain)).resolves.toMatchObject({ domain });
    }
  });

  it('the attack end to end: a partner on co.uk cannot exist, so bbc.co.uk is no preverified tag of it', async () => {
    await expect(onboard('co.uk')).rejects.toMatchObject({ reason: 'VALIDATION_ERROR' });
    // The test partner's own domain still generates its preverified tag.
    const merchant = await api(server, server.partner.apiKey).post('/v1/partners/merchant', { name: 'Shop' });
    const tag = await api(server, server.partner.apiKey).post('/v1/partners/tag/generate', {
      merchantId: merchant.body.merchantId,
      domain: server.partner.domain,
    });
    expect(tag.status).toBe(200);
    expect(tag.body.tagId).toEqual(expect.any(String));
  });

  it('`pnpm partner onboard --domain co.uk` exits 1 with the rule; a registrable domain is onboarded', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'sec10-'));
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
          cwd: SERVER_DIR,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: process.env.HOME ?? '/tmp',
            DATA_DIR: dataDir,
            LOG_LEVEL: 'silent',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c: Buffer) => {
          output += c.toString('utf8');
        });
        child.stderr.on('data', (c: Buffer) => {
          output += c.toString('utf8');
        });
        child.on('exit', (code) => resolve({ code, output }));
      });
    try {
      const refused = await cli(['onboard', '--name', 'Suffix', '--domain', 'co.uk']);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain('domain: co.uk is a public suffix');
      const accepted = await cli(['onboard', '--name', 'Acme', '--domain', 'acme-platform.com', '--json']);
      expect(accepted.code).toBe(0);
      expect(JSON.parse(accepted.output)).toMatchObject({ partnerId: expect.any(String) });
      const inside = await cli(['onboard', '--name', 'Inside', '--domain', 'eu.acme-platform.com']);
      expect(inside.code).toBe(1);
      expect(inside.output).toContain("inside another partner's domain");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    // Three cold processes (tsx, PGlite, the first one migrating a new data directory): 200 s
    // together at load 23 on 2 cores, 60 s at load 15.
  }, 300_000);
});
