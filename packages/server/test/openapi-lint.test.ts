import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/document.js';
import type { Json } from './helpers/api.js';

/**
 * The document a generated client and the /docs reader rely on, for every operation, whoever adds
 * it: descriptions everywhere, an example for every parameter and for every request and success
 * body (each valid against its schema), the response headers, declared tags, and Redocly's
 * `recommended` ruleset (plus the rules in redocly.yaml) at 0 errors and 0 warnings.
 * When this fails for an operation you added: give the zod schema `.meta({ description, example })`
 * in shared-schemas, the tag a line in TAG_DESCRIPTIONS (src/openapi/document.ts).
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const doc = buildOpenApiDocument() as unknown as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...structuredClone(doc), $id: 'openapi.json' });

function pointer(...segments: string[]): string {
  return `openapi.json#/${segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

function resolve(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((at: Json, key: string) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

/** Validates `value` against the schema at a pointer into the document; returns the errors. */
function invalid(value: unknown, ...segments: string[]): string | null {
  const validate = ajv.compile({ $ref: pointer(...segments) });
  if (validate(value)) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

const operations: Array<{ name: string; path: string; method: string; op: Json }> = [];
for (const [p, item] of Object.entries(doc.paths as Json)) {
  for (const method of METHODS) {
    const op = (item as Json)[method];
    if (op) operations.push({ name: `${method.toUpperCase()} ${p}`, path: p, method, op });
  }
}

describe('the OpenAPI document: descriptions, examples, headers (every operation)', () => {
  it('has operations, a license, a contact and a relative server URL without PUBLIC_BASE_URL', () => {
    expect(operations.length).toBeGreaterThanOrEqual(8);
    expect(doc.info.license).toMatchObject({ name: expect.any(String) });
    expect(doc.info.contact).toBeDefined();
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect((buildOpenApiDocument('https://api.partner.example') as Json).servers[0].url).toBe(
      'https://api.partner.example',
    );
  });

  it.each(operations)('$name: operationId, summary, description, declared tags', ({ op }) => {
    expect(op.operationId).toMatch(/^[a-z][a-z-]*$/);
    expect(op.summary).toEqual(expect.any(String));
    expect(op.description?.length ?? 0).toBeGreaterThan(20);
    expect(op.tags?.length ?? 0).toBeGreaterThan(0);
    for (const tag of op.tags) {
      const declared = (doc.tags as Json[]).find((t) => t.name === tag);
      expect(declared?.description, `tag ${tag} declared with a description (TAG_DESCRIPTIONS)`).toEqual(
        expect.any(String),
      );
    }
    expect(Array.isArray(op.security), 'security stated (`[]` for a public operation)').toBe(true);
  });

  it.each(operations)('$name: every parameter has a description and a valid example', ({ path: p, method, op }) => {
    for (const [index, raw] of ((op.parameters ?? []) as Json[]).entries()) {
      const parameter = resolve(raw);
      const where = `${parameter.in} parameter ${parameter.name}`;
      expect(parameter.description?.length ?? 0, `${where}: description`).toBeGreaterThan(5);
      expect(parameter.example ?? parameter.examples ?? parameter.schema?.examples, `${where}: example`).toBeDefined();
      if (parameter.example !== undefined) {
        expect(invalid(parameter.example, 'paths', p, method, 'parameters', String(index), 'schema'), where).toBeNull();
      }
    }
  });

  it.each(operations)('$name: the request body and every 2xx body have a valid example', ({ path: p, method, op }) => {
    for (const [type, media] of Object.entries<Json>((op.requestBody?.content ?? {}) as Json)) {
      expect(media.example, `request ${type}: example`).toBeDefined();
      expect(invalid(media.example, 'paths', p, method, 'requestBody', 'content', type, 'schema'), type).toBeNull();
    }
    const responses = Object.entries<Json>(op.responses as Json);
    expect(responses.some(([status]) => status.startsWith('2'))).toBe(true);
    for (const [status, response] of responses) {
      expect(response.description?.length ?? 0, `${status}: description`).toBeGreaterThan(3);
      for (const [type, media] of Object.entries<Json>((response.content ?? {}) as Json)) {
        if (!status.startsWith('2') && media.example === undefined) continue;
        expect(media.example, `${status} ${type}: example`).toBeDefined();
        expect(
          invalid(media.example, 'paths', p, method, 'responses', status, 'content', type, 'schema'),
          `${status} ${type}`,
        ).toBeNull();
      }
    }
  });

  it.each(operations)('$name: every response documents its headers, each described', ({ op, method }) => {
    const partner = op.security.length > 0;
    for (const [status, response] of Object.entries<Json>(op.responses as Json)) {
      const headers = (response.headers ?? {}) as Json;
      const names = Object.keys(headers).map((name) => name.toLowerCase());
      expect(names, `${status}: x-request-id`).toContain('x-request-id');
      if (status !== '401') {
        expect(names, `${status}: RateLimit-*`).toEqual(
          expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']),
        );
      }
      if (status === '429' || status === '503') expect(names, `${status}: Retry-After`).toContain('retry-after');
      // Idempotency-Key covers the partner POSTs (a PATCH sets a value: repeating it is harmless).
      if (partner && op.requestBody && method === 'post' && status.startsWith('2')) {
        expect(names, `${status}: Idempotent-Replayed`).toContain('idempotent-replayed');
      }
      for (const [name, raw] of Object.entries(headers)) {
        const header = resolve(raw as Json);
        expect(header.description?.length ?? 0, `${status} header ${name}: description`).toBeGreaterThan(5);
        expect(header.schema, `${status} header ${name}: schema`).toBeDefined();
        expect(header.example, `${status} header ${name}: example`).toBeDefined();
      }
    }
  });

  it('POST operations with a body take an Idempotency-Key when they are partner operations', () => {
    for (const { name, method, op } of operations) {
      if (method !== 'post' || op.security.length === 0) continue;
      const names = ((op.parameters ?? []) as Json[]).map((p) => resolve(p).name);
      expect(names, name).toContain('Idempotency-Key');
    }
  });

  it('declares JSON bodies only, and 415 on every operation that reads a body', () => {
    for (const { name, method, op } of operations) {
      if (op.requestBody) expect(Object.keys(op.requestBody.content), name).toEqual(['application/json']);
      if (method !== 'get') expect(Object.keys(op.responses), name).toContain('415');
    }
  });

  it.each([
    ['/v1/partners/events/stream', 'text/event-stream', 'StreamFrame'],
    ['/v1/partners/events/export', 'application/x-ndjson', 'ExportLine'],
  ])('describes %s as text, item by item (x-itemSchema)', (path, mediaType, item) => {
    const media = doc.paths[path].get.responses['200'].content[mediaType];
    // Never a JSON array: generic tools would parse the body as one.
    expect(media.schema).toMatchObject({ type: 'string', contentMediaType: mediaType });
    expect(media['x-itemSchema']).toEqual({ $ref: `#/components/schemas/${item}` });
    expect(media.schema.contentSchema).toEqual({ type: 'array', items: { $ref: `#/components/schemas/${item}` } });
    expect(typeof media.example).toBe('string');
  });

  it('describes the event stream with a referenced, valid StreamedEvent', () => {
    const ok = doc.paths['/v1/partners/events/stream'].get.responses['200'].content['text/event-stream'];
    const seen = new Set<string>();
    const walk = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      const ref = (node as Json).$ref;
      if (typeof ref === 'string') {
        if (seen.has(ref)) return;
        seen.add(ref);
        walk(resolve(node as Json));
        return;
      }
      for (const value of Object.values(node as Json)) walk(value);
    };
    walk(ok['x-itemSchema']);
    expect([...seen]).toContain('#/components/schemas/StreamedEvent');
    const event = {
      id: 'evt_1',
      muid: 'm_1',
      event_name: 'Purchase',
      event_time: '2026-11-22T10:00:00.000Z',
      raw_data: '{"value":42}',
      consent: 'granted',
      seq: 7,
    };
    expect(invalid(event, 'components', 'schemas', 'StreamedEvent')).toBeNull();
    expect(invalid({ ...event, seq: 0 }, 'components', 'schemas', 'StreamedEvent')).not.toBeNull();
    expect(invalid({ ...event, extra: 1 }, 'components', 'schemas', 'StreamedEvent')).not.toBeNull();
  });

  it('DnsRecord: an edge-xxxxxx label, a non-negative ttl', () => {
    const record = doc.components.schemas.DnsRecord;
    expect(record.properties.name.example).toMatch(/^edge-[a-z0-9]{6}$/);
    expect(record.properties.ttl.minimum).toBe(0);
  });
});

describe('Redocly lint (redocly.yaml: recommended + extra rules)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports 0 errors and 0 warnings', async () => {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = path.join(ROOT, 'node_modules/.bin/redocly');
    const run = promisify(execFile);
    const result = await run(bin, ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=stylish'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output, output).toMatch(/Your API description is valid/);
    expect(output, output).not.toMatch(/\b(error|warning)\b\s+\S+/);
  }, 60_000);
});
