import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/document.js';
import { recordResponses, startTestServer, type TestServer } from '../src/testing/index.js';
import { createContractChecker, listOperations, readRecordedResponses } from '../src/testing/openapi-contract.js';
import { api } from './helpers/api.js';

// The whole suite's responses are checked by `pnpm --filter @partner/server contract:check <dir>`
// after `RECORD_RESPONSES=<dir> pnpm test` (.ci/run). This file proves the mechanism on a
// request set of its own that reaches every operation's success and typical failures.

const document = buildOpenApiDocument('http://127.0.0.1');

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    expect(api).toHaveProperty('openapi', expect.stringMatching(/^3\.1\./));
    expect(listOperations(document).length).toBeGreaterThanOrEqual(6);
  });

  it('is rejected by the validator when broken (the check can fail)', async () => {
    const broken = structuredClone(document) as unknown as {
      paths: Record<string, Record<string, { responses?: unknown }>>;
    };
    const first = Object.values(broken.paths)[0];
    const operation = first && Object.values(first)[0];
    if (operation) operation.responses = { 200: { content: { 'application/json': { schema: { $ref: '#/nope' } } } } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });
});

describe('every REST response matches the document', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'contract-'));
    server = await startTestServer();
    recordResponses(server.app.server, dir);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('for successes and failures of every operation', async () => {
    const partner = api(server, server.partner.apiKey);
    const anonymous = api(server);
    const badKey = api(server, 'mp_live_not-a-real-key');

    const created = await partner.post('/v1/partners/merchant', { name: 'Contract Store' });
    expect(created.status).toBe(201);
    const merchantId = created.body.merchantId as string;
    await partner.post('/v1/partners/merchant', { name: '' });
    await partner.post('/v1/partners/merchant', 'not json');
    await partner.request('POST', '/v1/partners/merchant', {
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await anonymous.post('/v1/partners/merchant', { name: 'x' });
    await badKey.post('/v1/partners/merchant', { name: 'x' });

    await partner.get('/v1/partners/merchant?page=1&limit=10');
    await partner.get('/v1/partners/merchant?limit=1000');
    await anonymous.get('/v1/partners/merchant');

    const preverified = await partner.post('/v1/partners/tag/generate', {
      merchantId,
      domain: `shop.${server.partner.domain}`,
    });
    expect(preverified.status).toBe(200);
    const custom = await partner.post('/v1/partners/tag/generate', { merchantId, domain: 'contract-store.com' });
    expect(custom.status).toBe(200);
    await partner.post('/v1/partners/tag/generate', { merchantId, domain: 'not a domain' });
    await partner.post('/v1/partners/tag/generate', {
      merchantId: '00000000-0000-4000-8000-000000000000',
      domain: 'other-store.com',
    });

    const customTagId = custom.body.tagId as string;
    await partner.post('/v1/partners/tag/verify', { tagId: customTagId, subdomain: 'contract-store.com' }); // 422
    await partner.post('/v1/partners/tag/verify', { tagId: customTagId, subdomain: 'elsewhere.com' }); // 400
    await partner.post('/v1/partners/tag/verify', {
      tagId: '00000000-0000-4000-8000-000000000000',
      subdomain: 'contract-store.com',
    });
    await anonymous.post('/v1/collect', { tagId: customTagId, events: [{ event_name: 'PageView' }] }); // 409
    server.dns.setCname(`${custom.body.record.name}.contract-store.com`, custom.body.record.value);
    const verified = await partner.post('/v1/partners/tag/verify', {
      tagId: customTagId,
      subdomain: 'contract-store.com',
    });
    expect(verified.body).toEqual({ verified: true });

    const collected = await anonymous.post('/v1/collect', {
      tagId: preverified.body.tagId,
      events: [
        { id: 'contract-1', event_name: 'PageView', data: { path: '/' } },
        { event_name: 'Purchase', event_time: '2026-11-02T10:00:00Z', data: { value: 42 } },
      ],
    });
    expect(collected.status).toBe(202);
    await anonymous.post('/v1/collect', { tagId: preverified.body.tagId, events: [] });
    await anonymous.post('/v1/collect', {
      tagId: '00000000-0000-4000-8000-000000000000',
      events: [{ event_name: 'PageView' }],
    });

    const events = await partner.get(`/v1/partners/events?merchantId=${merchantId}&sortOrder=desc&limit=5`);
    expect(events.status).toBe(200);
    await partner.get(`/v1/partners/events?merchantId=${merchantId}&limit=0`);
    await partner.get('/v1/partners/events?merchantId=00000000-0000-4000-8000-000000000000');
    await partner.get('/v1/no-such-path');
    // The event stream (SSE): opened, then closed by the client; recorded when the server ends it.
    const stream = await fetch(`${server.url}/v1/partners/events/stream?merchantId=${merchantId}`, {
      headers: { authorization: `Bearer ${server.partner.apiKey}` },
    });
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    for (let i = 0; i < 250 && server.app.deps.streams.size > 0; i++) await new Promise((r) => setTimeout(r, 20));

    const checker = createContractChecker(await (await fetch(`${server.url}/openapi.json`)).json());
    const report = checker.check(readRecordedResponses(dir));
    expect(report.failures).toEqual([]);
    expect(report.checked).toBe(25);
    expect(report.unmatched).toBe(1);
    // Each operation driven above was reached with its documented success status (that the whole
    // suite reaches every operation is checked by `contract:check`).
    const driven = [
      'POST /v1/partners/merchant',
      'GET /v1/partners/merchant',
      'POST /v1/partners/tag/generate',
      'POST /v1/partners/tag/verify',
      'POST /v1/collect',
      'GET /v1/partners/events',
      'GET /v1/partners/events/stream',
    ];
    for (const op of checker.operations().filter((o) => driven.includes(`${o.method} ${o.path}`))) {
      const success = op.statuses.find((s) => s.startsWith('2'));
      expect(report.seen, `${op.method} ${op.path}`).toContain(`${op.method} ${op.path} ${success}`);
    }
    expect(checker.operations().filter((o) => driven.includes(`${o.method} ${o.path}`)).length).toBeGreaterThanOrEqual(
      6,
    );
  });

  it('reports a body, a status or a content type that drifted from the document', () => {
    const checker = createContractChecker(document);
    const report = checker.check([
      { method: 'POST', path: '/v1/partners/merchant', status: 201, contentType: 'application/json', body: '{}' },
      { method: 'POST', path: '/v1/partners/merchant', status: 418, contentType: 'application/json', body: '{}' },
      {
        method: 'GET',
        path: '/v1/partners/merchant',
        status: 401,
        contentType: 'text/html',
        body: '<p>no</p>',
      },
      {
        method: 'POST',
        path: '/v1/partners/merchant',
        status: 400,
        contentType: 'application/json',
        body: '{"message":"x","code":"NOT_A_CODE"}',
      },
    ]);
    expect(report.checked).toBe(4);
    expect(report.failures).toHaveLength(4);
    expect(report.failures[0]).toMatch(/does not match the schema/);
    expect(report.failures[1]).toMatch(/status 418 is not documented/);
    expect(report.failures[2]).toMatch(/content type/);
    expect(report.failures[3]).toMatch(/code/);
  });
});
