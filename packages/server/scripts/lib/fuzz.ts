import http from 'node:http';
import fc from 'fast-check';
import type { TestServer } from '../../src/testing/index.js';

/**
 * Property-based fuzzing of every endpoint over the real HTTP transport (fast-check). Each input is
 * one raw HTTP request: a method, a path (the spec's, case/slash variants, unknown ones), a query
 * (arrays, bad percent-encoding), an Authorization header, a content type and a body (valid bodies
 * with one field broken, missing or extra fields, any JSON, broken JSON, huge strings, unicode,
 * injection strings). Properties: never a 5xx; every REST error is `{ message, code }` (or the
 * spec's bearer-missing body); no stack trace; never another partner's data.
 */

export interface FuzzRequest {
  endpoint: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
}

export interface FuzzTarget {
  url: string;
  keyA: string;
  merchantA: string;
  tagA: string;
  merchantB: string;
  tagB: string;
  /** Strings only partner B's data contains (never sent in a request). */
  secretsB: string[];
}

const BEARER_MISSING_KEYS = ['error', 'message', 'statusCode'];

/** Partner A (the fuzzer's key) and partner B (whose data must never show), each with a merchant and a tag. */
export async function setupFuzzTarget(server: TestServer): Promise<FuzzTarget> {
  const post = async (key: string, path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`setup ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const b = await server.createPartner('Secret Partner B');
  const secretName = `SECRETB${Math.random().toString(36).slice(2, 10)}`;
  const merchantB = (await post(b.apiKey, '/v1/partners/merchant', { name: secretName })).merchantId as string;
  const tagB = await post(b.apiKey, '/v1/partners/tag/generate', {
    merchantId: merchantB,
    domain: `${secretName.toLowerCase()}.com`,
  });
  const keyA = server.partner.apiKey;
  const merchantA = (await post(keyA, '/v1/partners/merchant', { name: 'Fuzz A' })).merchantId as string;
  const tagA = await post(keyA, '/v1/partners/tag/generate', {
    merchantId: merchantA,
    domain: `${server.partner.domain}`,
  });
  // One event for each tag so event lists have rows to leak.
  for (const tagId of [tagA.tagId, tagB.tagId]) {
    await fetch(`${server.url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId, events: [{ event_name: tagId === tagB.tagId ? secretName : 'page_view' }] }),
    });
  }
  return {
    url: server.url,
    keyA,
    merchantA,
    tagA: tagA.tagId as string,
    merchantB,
    tagB: tagB.tagId as string,
    secretsB: [secretName, secretName.toLowerCase(), b.partnerId, b.domain, b.apiKey],
  };
}

const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE merchants; --",
  '" OR ""="',
  '1; SELECT pg_sleep(5)',
  '$$; select 1; $$',
  '<script>alert(1)</script>',
  '$'.concat('{7*7}'), // a template-injection probe
  '{{7*7}}',
  '../../../../etc/passwd',
  '%00',
  '\u0000',
  '\uFEFF',
  '\uD800',
  'ＡＢＣ',
  '🙂'.repeat(50),
  'e\u0301'.repeat(20),
  '__proto__',
  'constructor',
  'NaN',
  '-1',
  '1e309',
  '9'.repeat(40),
  'null',
  'true',
  '2024-02-30T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '*',
  '%',
  '\\',
  'a'.repeat(300),
];

const injection = fc.constantFrom(...INJECTIONS);
const hugeString = fc.constantFrom('x'.repeat(10_000), 'é'.repeat(70_000), '🙂'.repeat(40_000));

/** Any value a field could be sent as. */
const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 3, arbitrary: injection },
  { weight: 1, arbitrary: hugeString },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.string(), { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), fc.string(), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.uuid() },
);

/** A base object with one field broken, dropped, or with extra fields; or any JSON value at all. */
function mutatedObject(base: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 2, arbitrary: base },
    {
      weight: 4,
      arbitrary: fc.tuple(base, fc.nat(), junkValue).map(([obj, n, value]) => {
        const keys = Object.keys(obj);
        const key = keys[n % Math.max(1, keys.length)] ?? 'x';
        return { ...obj, [key]: value };
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(base, fc.nat()).map(([obj, n]) => {
        const keys = Object.keys(obj);
        const copy: Record<string, unknown> = { ...obj };
        delete copy[keys[n % Math.max(1, keys.length)] ?? 'x'];
        return copy;
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(base, fc.dictionary(fc.oneof(fc.string(), injection), junkValue, { minKeys: 1, maxKeys: 3 }))
        .map(([obj, extra]) => ({ ...extra, ...obj, ...extra })),
    },
    { weight: 2, arbitrary: fc.jsonValue() },
  );
}

type BodyChoice =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; text: string }
  | { kind: 'huge' }
  | { kind: 'none' };

function bodyOf(choice: BodyChoice): string | Buffer | undefined {
  switch (choice.kind) {
    case 'json':
      return JSON.stringify(choice.value) ?? 'undefined';
    case 'raw':
      return choice.text;
    case 'huge':
      return Buffer.alloc(MAX_BYTES_PLUS, 0x61);
    case 'none':
      return undefined;
  }
}

const MAX_BYTES_PLUS = 1024 * 1024 + 10;

function bodyArbitrary(base: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<BodyChoice> {
  const brokenJson = fc.tuple(base, fc.nat()).map(([obj, n]) => {
    const text = JSON.stringify(obj);
    return text.slice(0, n % Math.max(1, text.length));
  });
  return fc.oneof(
    { weight: 240, arbitrary: mutatedObject(base).map((value): BodyChoice => ({ kind: 'json', value })) },
    { weight: 40, arbitrary: brokenJson.map((text): BodyChoice => ({ kind: 'raw', text })) },
    {
      weight: 40,
      arbitrary: fc
        .oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          injection,
          fc.constantFrom('{', '[', '{"a":', '}{', 'nul', '\u0000'),
        )
        .map((text): BodyChoice => ({ kind: 'raw', text })),
    },
    { weight: 20, arbitrary: fc.constant<BodyChoice>({ kind: 'none' }) },
    // A body over the 1 MB limit, rarely (it is slow).
    { weight: 1, arbitrary: fc.constant<BodyChoice>({ kind: 'huge' }) },
  );
}

const contentType = fc.oneof(
  { weight: 16, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/xml',
      'application/json; charset=utf-16',
      'application/merge-patch+json',
      '*/*',
      '',
      'none',
      'application/json, text/html',
      'json',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  },
);

function queryArbitrary(known: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const knownKeys = Object.keys(known);
  const pair = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(...knownKeys)
        .chain((k) =>
          fc.tuple(
            fc.constant(k),
            fc.oneof(
              { weight: 3, arbitrary: known[k] as fc.Arbitrary<string> },
              { weight: 2, arbitrary: fc.oneof(fc.string(), injection, fc.string({ unit: 'grapheme' })) },
            ),
          ),
        ),
    },
    { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.string(), injection), fc.string()) },
    // Arrays: `k[]=v` and the same key repeated.
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom(...knownKeys).map((k) => `${k}[]`),
        fc.string(),
      ),
    },
  );
  const encoded = fc.array(pair, { maxLength: 7 }).map((pairs) => {
    const params = new URLSearchParams();
    for (const [k, v] of pairs) params.append(k, v);
    return params.toString();
  });
  const raw = fc.constantFrom(
    '%',
    '%zz',
    'a=%E0%A4%A',
    '&&&',
    '=',
    'limit=1&limit=2&limit=3',
    '?x=1',
    '#frag',
    'merchantId[a]=1',
  );
  return fc.oneof({ weight: 6, arbitrary: encoded }, { weight: 1, arbitrary: raw });
}

function authArbitrary(keyA: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant(`Bearer ${keyA}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        'Bearer',
        'Bearer ',
        keyA,
        `Basic ${keyA}`,
        `bearer ${keyA}`,
        `Bearer ${keyA}x`,
        `Bearer ${keyA.slice(0, -1)}`,
        `Bearer mp_test_${'a'.repeat(32)}`,
        `Bearer ${"' OR 1=1 --"}`,
        `Bearer ${keyA} ${keyA}`,
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) })
        .map((s) => `Bearer ${s}`),
    },
  );
}

/** The request arbitrary for every endpoint of the service. */
function requestArbitrary(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const merchantId = fc.oneof(
    { weight: 4, arbitrary: fc.constant(t.merchantA) },
    { weight: 3, arbitrary: fc.constant(t.merchantB) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.oneof(fc.string(), injection) },
  );
  const tagId = fc.oneof(
    { weight: 4, arbitrary: fc.constant(t.tagA) },
    { weight: 3, arbitrary: fc.constant(t.tagB) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.oneof(fc.string(), injection) },
  );
  const domain = fc.oneof(
    fc.domain(),
    fc.constantFrom('localhost', 'example', '.com', 'a..b.com', 'xn--e1afmkfd.xn--p1ai', '127.0.0.1', 'Ünïcode.com'),
    fc.string(),
  );
  // Four-digit years with any offset: an offset can carry a valid local time out of years
  // 0001-9999 in UTC, which PostgreSQL refuses (issue 30, finding 1).
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const offsetDateTime = fc
    .record({
      date: fc.oneof(
        fc.constantFrom('0001-01-01', '9999-12-31', '0000-12-31'),
        fc
          .record({
            year: fc.integer({ min: 0, max: 9999 }),
            month: fc.integer({ min: 1, max: 12 }),
            day: fc.integer({ min: 1, max: 28 }),
          })
          .map((d) => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`),
      ),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      sign: fc.constantFrom('+', '-'),
      offsetHours: fc.integer({ min: 0, max: 23 }),
      offsetMinutes: fc.integer({ min: 0, max: 59 }),
    })
    .map((v) => `${v.date}T${pad(v.hour)}:${pad(v.minute)}:00${v.sign}${pad(v.offsetHours)}:${pad(v.offsetMinutes)}`);
  const isoDate = fc.oneof(
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    offsetDateTime,
    fc.constantFrom('2024-01-01', 'yesterday', '2024-13-01T00:00:00Z', '9999-12-31T23:59:00-23:59', '0000-12-31'),
  );
  const event = fc.record(
    {
      id: fc.oneof(fc.uuid(), fc.string()),
      event_name: fc.oneof(fc.constantFrom('page_view', 'purchase'), fc.string()),
      event_time: isoDate,
      muid: fc.string(),
      data: fc.jsonValue(),
    },
    { requiredKeys: ['event_name'] },
  );

  const authorization = authArbitrary(t.keyA);
  const pathVariant = (path: string) =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constant(path) },
      { weight: 1, arbitrary: fc.constantFrom(`${path}/`, path.toUpperCase(), `${path}//`) },
    );

  const post = (endpoint: string, path: string, base: fc.Arbitrary<Record<string, unknown>>, auth = true) =>
    fc
      .record({
        path: pathVariant(path),
        body: bodyArbitrary(base),
        contentType,
        authorization: auth ? authorization : fc.constant(undefined),
        idempotencyKey: fc.option(
          fc.oneof(
            fc.uuid(),
            fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
          ),
          { freq: 4 },
        ),
      })
      .map(({ path: p, body, contentType: ct, authorization: a, idempotencyKey }): FuzzRequest => {
        const headers: Record<string, string> = {};
        if (ct !== 'none') headers['content-type'] = ct;
        if (a !== undefined) headers.authorization = a;
        if (idempotencyKey !== null && idempotencyKey !== '') headers['idempotency-key'] = idempotencyKey;
        return { endpoint, method: 'POST', path: p, headers, body: bodyOf(body) };
      });

  const get = (endpoint: string, path: string, known: Record<string, fc.Arbitrary<string>>) =>
    fc.record({ path: pathVariant(path), query: queryArbitrary(known), authorization }).map(
      ({ path: p, query, authorization: a }): FuzzRequest => ({
        endpoint,
        method: 'GET',
        path: query ? `${p}?${query}` : p,
        headers: a === undefined ? {} : { authorization: a },
      }),
    );

  const pageParams = {
    page: fc.oneof(fc.integer({ min: -5, max: 1000 }).map(String), fc.constantFrom('1.5', '1e3', 'abc', '')),
    limit: fc.oneof(fc.integer({ min: -5, max: 1000 }).map(String), fc.constantFrom('0', '101', 'NaN')),
  };

  const trpc = fc
    .record({
      procedure: fc.constantFrom(
        'merchant.create',
        'merchant.list',
        'tag.generate',
        'tag.verify',
        'events.list',
        'collect.ingest',
        'nope',
        'merchant',
      ),
      input: fc.oneof(mutatedObject(fc.record({ merchantId, name: fc.string(), tagId, domain })), fc.jsonValue()),
      get: fc.boolean(),
      authorization,
    })
    .map(({ procedure, input, get: isGet, authorization: a }): FuzzRequest => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (a !== undefined) headers.authorization = a;
      const json = JSON.stringify(input) ?? 'null';
      return isGet
        ? {
            endpoint: `trpc ${procedure}`,
            method: 'GET',
            path: `/trpc/${procedure}?input=${encodeURIComponent(json)}`,
            headers,
          }
        : { endpoint: `trpc ${procedure}`, method: 'POST', path: `/trpc/${procedure}`, headers, body: json };
    });

  const other = fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
      path: fc.oneof(
        fc.constantFrom(
          '/',
          '/healthz',
          '/readyz',
          '/openapi.json',
          '/v1',
          '/v1/',
          '/v1/partners',
          '/v1/partners/merchant/x',
          '/v1/collect/x',
          '/v1/partners/tag',
          '/trpc',
          '/%',
          '/v1/partners/%2e%2e/collect',
        ),
        fc.webPath().map((p) => `/v1/partners${p.startsWith('/') ? p : `/${p}`}`),
      ),
      body: fc.option(fc.string(), { freq: 2 }),
      authorization,
    })
    .map(
      ({ method, path, body, authorization: a }): FuzzRequest => ({
        endpoint: 'other',
        method,
        path,
        headers:
          a === undefined
            ? { 'content-type': 'application/json' }
            : { authorization: a, 'content-type': 'application/json' },
        ...(body !== null && method !== 'GET' ? { body } : {}),
      }),
    );

  return fc.oneof(
    {
      weight: 3,
      arbitrary: post(
        'POST /v1/collect',
        '/v1/collect',
        fc.record({ tagId, events: fc.array(event, { maxLength: 4 }) }),
        false,
      ),
    },
    {
      weight: 3,
      arbitrary: post(
        'POST /v1/partners/merchant',
        '/v1/partners/merchant',
        fc.record({ name: fc.oneof(fc.string(), injection) }),
      ),
    },
    {
      weight: 3,
      arbitrary: post('POST /v1/partners/tag/generate', '/v1/partners/tag/generate', fc.record({ merchantId, domain })),
    },
    {
      weight: 3,
      arbitrary: post(
        'POST /v1/partners/tag/verify',
        '/v1/partners/tag/verify',
        fc.record({ tagId, subdomain: domain }),
      ),
    },
    { weight: 3, arbitrary: get('GET /v1/partners/merchant', '/v1/partners/merchant', pageParams) },
    {
      weight: 3,
      arbitrary: get('GET /v1/partners/events', '/v1/partners/events', {
        ...pageParams,
        merchantId,
        startDate: isoDate,
        endDate: isoDate,
        events: fc.oneof(fc.constantFrom('page_view', 'page_view,purchase', ',', ''), fc.string()),
        sortBy: fc.constantFrom('event_time', 'event_name', 'id', 'x'),
        sortOrder: fc.constantFrom('asc', 'desc', 'ASC', 'up'),
      }),
    },
    { weight: 2, arbitrary: trpc },
    { weight: 1, arbitrary: other },
  );
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Sends one raw request (no client-side validation of header values or bodies). */
export function sendRaw(base: string, req: FuzzRequest, timeoutMs = 10_000): Promise<FuzzResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const request = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    if (req.body !== undefined) request.end(req.body);
    else request.end();
  });
}

/** The first property the response breaks, or null. */
function violation(t: FuzzTarget, req: FuzzRequest, res: FuzzResponse): string | null {
  if (res.status >= 500) return `5xx (${res.status}): ${res.text.slice(0, 300)}`;
  if (/\n\s+at\s|node_modules|\.ts:\d+/.test(res.text)) return 'stack trace in the body';
  const sent = `${req.path}\n${JSON.stringify(req.headers)}\n${req.body?.toString() ?? ''}`;
  for (const secret of [...t.secretsB, t.merchantB, t.tagB]) {
    if (res.text.includes(secret) && !sent.includes(secret)) return `partner B's data (${secret}) in the response`;
  }
  if (req.method === 'HEAD') return null;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return `not JSON (${res.status}, ${res.contentType}): ${res.text.slice(0, 200)}`;
  }
  if (req.path.startsWith('/trpc')) return null; // tRPC keeps its own error envelope (with the same code in error.data)
  if (res.status >= 400) {
    const obj = body as Record<string, unknown>;
    const keys = Object.keys(obj ?? {}).sort();
    if (res.status === 401 && keys.join() === BEARER_MISSING_KEYS.join()) return null;
    if (keys.join() !== 'code,message' || typeof obj.message !== 'string' || typeof obj.code !== 'string') {
      return `error body is not { message, code }: ${res.text.slice(0, 200)}`;
    }
  }
  return null;
}

export interface FuzzReport {
  inputs: number;
  fiveXx: number;
  byEndpoint: Record<string, number>;
  byStatus: Record<string, number>;
  ms: number;
}

/**
 * Runs `numRuns` generated requests against the server and throws (with fast-check's shrunk
 * counterexample and seed) on the first broken property.
 */
export async function runFuzz(t: FuzzTarget, numRuns: number, seed?: number): Promise<FuzzReport> {
  const report: FuzzReport = { inputs: 0, fiveXx: 0, byEndpoint: {}, byStatus: {}, ms: 0 };
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(requestArbitrary(t), async (req) => {
      const res = await sendRaw(t.url, req);
      report.inputs += 1;
      report.byEndpoint[req.endpoint] = (report.byEndpoint[req.endpoint] ?? 0) + 1;
      report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
      if (res.status >= 500) report.fiveXx += 1;
      const broken = violation(t, req, res);
      if (broken)
        throw new Error(
          `${broken}\nrequest: ${req.method} ${req.path} ${JSON.stringify(req.headers)} ${String(req.body ?? '').slice(0, 300)}`,
        );
    }),
    { numRuns, ...(seed === undefined ? {} : { seed }) },
  );
  report.ms = Math.round(performance.now() - started);
  return report;
}
