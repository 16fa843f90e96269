import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../../sdk/src/index.js';
import { buildOpenApiDocument } from '../src/openapi/document.js';
import type { Json } from './helpers/api.js';

/**
 * The SDK covers every operation of the OpenAPI document, now and later: each operationId maps to
 * an SDK method (`resource.method` on a PartnerClient), and each SDK method maps back to an
 * operation (or is listed in NOT_OPERATIONS with the reason). Adding an operation: add its SDK
 * method and a row here.
 */
const SDK_METHOD_OF_OPERATION: Record<string, string> = {
  'merchant-list': 'merchants.list',
  'merchant-create': 'merchants.create',
  'merchant-sessions-create': 'merchants.sessions.create',
  'merchant-get': 'merchants.retrieve',
  'merchant-update': 'merchants.update',
  'merchant-delete': 'merchants.delete',
  'merchant-goals-create': 'merchants.goals.create',
  'merchant-goals-list': 'merchants.goals.list',
  'merchant-goals-delete': 'merchants.goals.delete',
  'tag-generate': 'tags.generate',
  'tag-verify': 'tags.verify',
  'tag-snippet': 'tags.snippet',
  'tag-get': 'tags.retrieve',
  'tag-update': 'tags.update',
  'tag-delete': 'tags.delete',
  'events-list': 'events.list',
  'events-stream': 'events.stream',
  'events-export': 'events.export',
  'collect-ingest': 'events.send',
  'webhooks-create': 'webhooks.create',
  'webhooks-list': 'webhooks.list',
  'webhooks-delete': 'webhooks.delete',
  'webhooks-rotate-secret': 'webhooks.rotateSecret',
  'webhooks-test': 'webhooks.test',
  'webhooks-deliveries-list': 'webhooks.deliveries.list',
  'webhooks-deliveries-retry': 'webhooks.deliveries.retry',
  'stats-summary': 'stats.summary',
  'stats-timeseries': 'stats.timeseries',
  'stats-breakdown': 'stats.breakdown',
  'stats-realtime': 'stats.realtime',
  'stats-funnel': 'stats.funnel',
  'stats-attribution': 'stats.attribution',
  'erasures-create': 'erasures.create',
  'erasures-get': 'erasures.retrieve',
  'settings-get': 'settings.retrieve',
  'settings-update': 'settings.update',
  'test-tags-trigger': 'testHelpers.triggerTag',
  'test-merchants-trigger': 'testHelpers.triggerStats',
};

/** SDK methods that are not API operations (helpers that run locally), with why. */
const NOT_OPERATIONS: Record<string, string> = {
  'webhooks.unwrap': 'verifies a received webhook locally (Web Crypto); no request',
};

function operationIds(): string[] {
  const doc = buildOpenApiDocument() as unknown as Json;
  const ids: string[] = [];
  for (const item of Object.values(doc.paths as Json)) {
    for (const operation of Object.values<Json>(item as Json)) {
      if (operation && typeof operation === 'object' && 'operationId' in operation) ids.push(operation.operationId);
    }
  }
  return ids;
}

/** Every method of the client's resources (`merchants.list`, `webhooks.endpoints.create`, ...). */
function sdkMethods(value: object, prefix = '', seen = new Set<object>()): string[] {
  if (seen.has(value)) return [];
  seen.add(value);
  const out: string[] = [];
  for (const [name, child] of Object.entries(value)) {
    if (!child || typeof child !== 'object' || Object.getPrototypeOf(child) === Object.prototype) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    let proto = Object.getPrototypeOf(child);
    while (proto && proto !== Object.prototype) {
      for (const method of Object.getOwnPropertyNames(proto)) {
        if (method === 'constructor' || method.startsWith('_')) continue;
        const descriptor = Object.getOwnPropertyDescriptor(proto, method);
        if (typeof descriptor?.value === 'function') out.push(`${path}.${method}`);
      }
      proto = Object.getPrototypeOf(proto);
    }
    out.push(...sdkMethods(child, path, seen));
  }
  return [...new Set(out)];
}

function resolveMethod(client: PartnerClient, path: string): unknown {
  const parts = path.split('.');
  const name = parts.pop() as string;
  const owner = parts.reduce<Json>((at, key) => at?.[key], client);
  return owner?.[name];
}

describe('the SDK covers every operation of the OpenAPI document', () => {
  const client = new PartnerClient({ apiKey: 'mp_live_coverage', baseURL: 'http://127.0.0.1:9' });
  const ids = operationIds();
  const methods = sdkMethods(client);

  it('finds the operations and the SDK methods', () => {
    expect(ids.length).toBeGreaterThanOrEqual(8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(methods).toContain('merchants.list');
  });

  it.each(ids)('operation %s has an SDK method', (id) => {
    const path = SDK_METHOD_OF_OPERATION[id];
    expect(path, `no SDK method mapped for operationId ${id}: add one and a row in SDK_METHOD_OF_OPERATION`).toEqual(
      expect.any(String),
    );
    expect(typeof resolveMethod(client, path as string), `client.${path}`).toBe('function');
  });

  it('every mapped operationId exists in the document', () => {
    for (const id of Object.keys(SDK_METHOD_OF_OPERATION)) expect(ids, id).toContain(id);
  });

  it('every SDK method maps to an operation (or is a listed local helper)', () => {
    const mapped = new Set(Object.values(SDK_METHOD_OF_OPERATION));
    const unmapped = methods.filter((method) => !mapped.has(method) && !(method in NOT_OPERATIONS));
    expect(unmapped, 'SDK methods with no operation in the document').toEqual([]);
    expect(new Set(Object.values(SDK_METHOD_OF_OPERATION)).size, 'one SDK method per operation').toBe(
      Object.keys(SDK_METHOD_OF_OPERATION).length,
    );
  });
});
