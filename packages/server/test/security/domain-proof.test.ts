// Issue 18, finding 7: domain claims by wildcard, answers for another name, CNAME chains.
// Each test reproduces the audit's finding through the real HTTP transport and the loopback DNS
// server, and failed on the code before the fix (commit message and docs/decisions/dns-verification.md, from
// "Tag monitor and domain proof").
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tags } from '../../src/db/schema/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { type GeneratedTag, generateTag, listedTag, uniqueDomain } from '../helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { TAG_MONITOR: 'off' } });
});
afterAll(() => server?.close());

const verify = (tag: GeneratedTag, key = server.partner.apiKey) =>
  api(server, key).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: tag.domain });

describe('finding 7: a wildcard CNAME does not prove a domain', () => {
  it("a victim's wildcard to the shared target host verifies no other partner's tag (per-tag targets)", async () => {
    // The victim publishes `*.victim CNAME <target host>` (the one target every tag shared before).
    const victim = uniqueDomain('victim');
    server.dns.setCname(`*.${victim}`, server.dns.targetHost);
    const attacker = await server.createPartner('Attacker');
    const tag = await generateTag(server, { key: attacker.apiKey, domain: victim });
    expect(tag.record.value).not.toBe(server.dns.targetHost);
    const res = await verify(tag, attacker.apiKey);
    expect(res.status).toBe(422);
    expect(res.body.details.reason).toBe('WRONG_TARGET');
    expect(await listedTag(server, tag, attacker.apiKey)).toMatchObject({ isVerified: false, status: 'inactive' });
  });

  it("a victim's wildcard to its own tag's target verifies no other partner's tag", async () => {
    const victim = uniqueDomain('victim');
    const owner = await generateTag(server, { domain: victim });
    server.dns.setCname(`*.${victim}`, owner.record.value);
    const attacker = await server.createPartner('Attacker');
    const tag = await generateTag(server, { key: attacker.apiKey, domain: victim });
    const res = await verify(tag, attacker.apiKey);
    expect(res.status).toBe(422);
    expect(res.body.details.reason).toBe('WRONG_TARGET');
  });

  it('a tag made before per-tag targets (shared target) is refused under a wildcard: WILDCARD_RECORD', async () => {
    const victim = uniqueDomain('victim');
    server.dns.setCname(`*.${victim}`, server.dns.targetHost);
    const attacker = await server.createPartner('Attacker');
    const tag = await generateTag(server, { key: attacker.apiKey, domain: victim });
    // As migration 0007 leaves older tags: no target label, the CNAME points at the target host itself.
    await server.app.database.db.update(tags).set({ targetLabel: null }).where(eq(tags.id, tag.tagId));
    const res = await verify(tag, attacker.apiKey);
    expect(res.status).toBe(422);
    expect(res.body.details).toMatchObject({
      reason: 'WILDCARD_RECORD',
      expected: { name: `${tag.record.name}.${victim}`, value: server.dns.targetHost },
    });
    expect(await listedTag(server, tag, attacker.apiKey)).toMatchObject({ isVerified: false, status: 'inactive' });
    // The same older tag with an exact record and no wildcard still verifies (existing tags keep working).
    server.dns.clear(`*.${victim}`);
    server.dns.setCname(`${tag.record.name}.${victim}`, server.dns.targetHost);
    expect((await verify(tag, attacker.apiKey)).status).toBe(200);
  });
});

describe("finding 7: the answer's owner name is checked", () => {
  it('a CNAME answered under another owner name is not the record', async () => {
    const tag = await generateTag(server);
    const name = `${tag.record.name}.${tag.domain}`;
    server.dns.set(name, { kind: 'cname', target: tag.record.value, owner: `other.${tag.domain}` });
    const res = await verify(tag);
    expect(res.status).toBe(422);
    expect(res.body.details).toMatchObject({
      reason: 'RECORD_NOT_FOUND',
      found: [{ type: 'CNAME', name: `other.${tag.domain}`, value: tag.record.value }],
    });
    expect(await listedTag(server, tag)).toMatchObject({ isVerified: false });
  });
});

describe('finding 7: CNAME chains are followed to a bounded depth', () => {
  it('a record chained through a CDN to the target verifies', async () => {
    const tag = await generateTag(server);
    const cdn = `${tag.tagId.slice(0, 8)}.edge-cdn.example.net`;
    server.dns.setCname(`${tag.record.name}.${tag.domain}`, cdn);
    server.dns.setCname(cdn, tag.record.value);
    const res = await verify(tag);
    expect(res.status).toBe(200);
    expect(await listedTag(server, tag)).toMatchObject({ isVerified: true, status: 'waiting_for_events' });
  });
});
