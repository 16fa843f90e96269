import { afterAll, beforeAll, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { createMerchant } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(() => server?.close());

it('probe', async () => {
  const a = api(server, server.partner.apiKey);
  const m = await createMerchant(server);
  const rs = await Promise.all(Array.from({ length: 20 }, () => a.post('/v1/partners/tag/generate', { merchantId: m, domain: 'conc-x.com' })));
  console.log(rs.map((r) => `${r.status} ${r.body.tagId} ${r.body.message}`).join('\n'));
  const doc = (await a.get('/openapi.json')).body;
  console.log(JSON.stringify(doc.paths, null, 1).slice(0, 6000));
  console.log(Object.keys(doc.components.schemas));
  await server.app.database.close();
  for (const p of ['/v1/partners/merchant', '/readyz']) {
    const r = await a.get(p); console.log(p, r.status, r.text);
  }
  const r = await api(server).post('/v1/collect', { tagId: '00000000-0000-4000-8000-000000000000', events: [{ event_name: 'x' }] });
  console.log(r.status, r.text);
  const r2 = await server.caller(server.partner.apiKey).merchant.list({}).catch((e) => e);
  console.log(r2, r2.cause);
});
