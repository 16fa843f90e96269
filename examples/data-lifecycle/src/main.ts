// What a partner's legal team asks for, with the SDK: retention periods, a visitor's access
// request and erasure, a merchant moving domain, offboarding a merchant, and test mode's
// simulated outcomes.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:lifecycle   # the test key the first `pnpm start` printed
//   PARTNER_API_KEY=mp_live_... PARTNER_TEST_API_KEY=mp_test_... pnpm example:lifecycle
//
// PARTNER_DOMAIN is the partner's onboarded domain (tags under it are live at once). The test-mode
// part runs with PARTNER_TEST_API_KEY, or with PARTNER_API_KEY when that is a test key.
import { type Erasure, NotFoundError, PartnerClient, type TrackingEvent, UnprocessableEntityError } from '@partner/sdk';

const step = (title: string) => console.log(`\n== ${title}`);

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`unexpected: ${what}`);
}

/** Polls an erasure until it completes (the API answers 202 at once; the job runs in the background). */
async function completed(client: PartnerClient, erasure: Erasure, timeoutMs = 60_000): Promise<Erasure> {
  const deadline = Date.now() + timeoutMs;
  for (let current = erasure; ; current = await client.erasures.retrieve(erasure.id)) {
    if (current.status === 'completed') return current;
    if (Date.now() > deadline) throw new Error(`erasure ${erasure.id} still ${current.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function liveMode(client: PartnerClient, partnerDomain: string, runId: string): Promise<void> {
  step('1. A merchant, a tag and two visitors');
  const { merchantId } = await client.merchants.create({ name: `Lifecycle Store ${runId}` });
  const tag = await client.tags.generate({ merchantId, domain: `lifecycle-${runId}.${partnerDomain}` });
  const now = Date.now();
  const events = ['muid_ada', 'muid_ada', 'muid_bob'].map((muid, i) => ({
    event_name: 'PageView',
    event_time: new Date(now - i * 60_000),
    muid,
    data: { path: `/p${i}` },
  }));
  console.log(
    `merchant ${merchantId}, tag ${tag.tagId}: sent ${(await client.events.send({ tagId: tag.tagId, events })).accepted} events`,
  );

  step('2. Retention: 400 days for the partner, 30 for this merchant');
  const settings = await client.settings.update({ defaultRetentionDays: 400 });
  const merchant = await client.merchants.update(merchantId, {
    name: `Lifecycle Store ${runId} (EU)`,
    retentionDays: 30,
  });
  console.log(
    `partner default ${settings.defaultRetentionDays} days; ${merchant.name}: ${merchant.retentionDays} days`,
  );

  step("3. A visitor's access request: every event of muid_ada");
  // The export streams every matching event (NDJSON) in constant memory, however many there are.
  const ada: TrackingEvent[] = [];
  for await (const event of client.events.export({ merchantId, muid: 'muid_ada' })) ada.push(event);
  console.log(ada.map((event) => `${event.event_time}  ${event.event_name}  consent=${event.consent}`).join('\n'));
  check(ada.length === 2, `2 events of muid_ada, got ${ada.length}`);

  step('4. Her erasure request: delete her events and refuse new ones');
  const erasure = await completed(
    client,
    await client.erasures.create({ muid: 'muid_ada', merchantId, suppress: true }),
  );
  console.log(`erasure ${erasure.id}: ${erasure.status}, ${erasure.eventsDeleted} events deleted`);
  check(erasure.eventsDeleted === 2, `2 events deleted, got ${erasure.eventsDeleted}`);
  check(
    (await client.events.list({ merchantId, muid: 'muid_ada' }).toArray({ limit: 100 })).length === 0,
    'muid_ada has no events left',
  );
  check(
    (await client.events.list({ merchantId, muid: 'muid_bob' }).toArray({ limit: 100 })).length === 1,
    'muid_bob keeps his event',
  );

  step('5. The merchant moves domain: delete the old tag, generate the new one');
  await client.tags.delete(tag.tagId);
  const moved = await client.tags.generate({ merchantId, domain: `lifecycle-new-${runId}.${partnerDomain}` });
  console.log(`old tag deleted; new tag ${moved.tagId} (${moved.status}) on ${moved.domain}`);

  step('6. The merchant leaves the platform');
  const deleted = await client.merchants.delete(merchantId);
  console.log(`deleted: ${deleted.deleted}, purge ${deleted.purge} (a merchant.deleted webhook follows it)`);
  try {
    await client.merchants.retrieve(merchantId);
    throw new Error('a deleted merchant was still readable');
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    console.log(`retrieve -> 404 ${error.code}: gone for every reader at once`);
  }
}

async function testMode(testClient: PartnerClient, runId: string): Promise<void> {
  step('7. Test mode: simulated DNS outcomes and tag states, no real DNS');
  const { merchantId } = await testClient.merchants.create({ name: `Test Store ${runId}` });
  const { livemode } = await testClient.merchants.retrieve(merchantId);
  console.log(`test merchant ${merchantId} (livemode ${livemode})`);
  check(livemode === false, 'a test key makes test merchants');
  const missing = await testClient.tags.generate({ merchantId, domain: `shop-${runId}-record-not-found.com` });
  try {
    await testClient.tags.verify({ tagId: missing.tagId, subdomain: missing.domain });
    throw new Error('a -record-not-found domain verified');
  } catch (error) {
    if (!(error instanceof UnprocessableEntityError)) throw error;
    const { reason } = (error.details ?? {}) as { reason?: string };
    console.log(`shop-...-record-not-found.com -> 422 ${error.code}, reason ${reason}`);
    check(reason === 'RECORD_NOT_FOUND', `reason RECORD_NOT_FOUND, got ${reason}`);
  }
  await testClient.tags.delete(missing.tagId); // one tag per merchant: the next domain needs it gone
  const custom = await testClient.tags.generate({ merchantId, domain: `shop-${runId}.com` });
  const verified = await testClient.tags.verify({ tagId: custom.tagId, subdomain: custom.domain });
  console.log(`shop-${runId}.com -> verified: ${verified.verified}`);
  for (const event of ['tag.disconnected', 'tag.reconnected'] as const) {
    const tag = await testClient.testHelpers.triggerTag(custom.tagId, { event });
    console.log(`trigger ${event} -> connected: ${tag.isConnected} (its webhook is on its way)`);
  }
}

const apiKey = process.env.PARTNER_API_KEY;
if (!apiKey) {
  console.error('Set PARTNER_API_KEY: the test key (mp_test_...) the first `pnpm start` printed, or a key of yours.');
  process.exit(1);
}
const baseURL = process.env.PARTNER_BASE_URL || 'http://localhost:3000';
const runId = Date.now().toString(36);
await liveMode(new PartnerClient({ apiKey, baseURL }), process.env.PARTNER_DOMAIN || 'demo-partner.example', runId);
const testKey = process.env.PARTNER_TEST_API_KEY || (apiKey.startsWith('mp_test_') ? apiKey : undefined);
if (testKey) await testMode(new PartnerClient({ apiKey: testKey, baseURL }), runId);
else console.log('\n(no PARTNER_TEST_API_KEY: test mode skipped)');
console.log('\ndone');
