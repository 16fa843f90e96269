/**
 * The framework floor: `GET /v1/partners/merchant` and `GET /v1/partners/events` for one partner
 * (PARTNER_ID) served the way the API serves them (tRPC v11 procedures with the same input
 * schemas, behind trpc-to-openapi's node:http adapter, both with the workspace's patches) running
 * the same statements over postgres.js (the event list's two in parallel, shaped by the API's own
 * `eventListResponse`) and writing the same JSON (and the list's `Link` header), and nothing else: no authentication, rate limits,
 * middleware, request ids, security headers, metrics or logging. The bare server against this one
 * is what the mandated stack costs by itself; this one against the API is what our own request path
 * adds.
 */
import http from 'node:http';
import { eventListQueries, eventListResponse, merchantListSql, nextPageLink } from '@partner/server/bench';
import {
  buildPagination,
  ListEventsQuery,
  ListEventsResponse,
  ListMerchantsQuery,
  ListMerchantsResponse,
} from '@partner/shared-schemas';
import { initTRPC } from '@trpc/server';
import postgres from 'postgres';
import { createOpenApiNodeHttpHandler, type OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';
import { serveUntilTerm } from './lib/serve.js';

const url = process.env.DATABASE_URL ?? '';
const partnerId = process.env.PARTNER_ID ?? '';
if (!url || !partnerId) throw new Error('DATABASE_URL and PARTNER_ID are required');
const sql = postgres(url, { max: Number(process.env.DB_POOL_MAX ?? 6), onnotice: () => {} });
const cursorKey = Buffer.from(process.env.CURSOR_SECRET ?? '', 'utf8');
const run = (query: { sql: string; params: unknown[] }) =>
  sql.unsafe(query.sql, query.params as never[], { prepare: true });

const t = initTRPC.meta<OpenApiMeta>().context<{ res: { setHeader(name: string, value: string): unknown } }>().create();
// The output schemas as the API's compiled build gives them to tRPC: documented, not parsed (hot-list-output.ts).
const trusted = <T extends z.ZodType>(schema: T): T =>
  Object.create(schema, {
    parse: { value: (value: unknown) => value },
    parseAsync: { value: async (value: unknown) => value },
  }) as T;

const router = t.router({
  list: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v1/partners/merchant' } })
    .input(ListMerchantsQuery)
    .output(trusted(ListMerchantsResponse))
    .query(async ({ input }) => {
      const page = input.page ?? 1;
      const limit = input.limit ?? 10;
      const [row] = await run(merchantListSql(partnerId, { page, limit }));
      return {
        merchants: row
          ? (JSON.parse(row.merchants as string) as z.infer<typeof ListMerchantsResponse>['merchants'])
          : [],
        pagination: buildPagination(page, limit, Number(row?.total ?? 0)),
      };
    }),
  events: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v1/partners/events' } })
    .input(ListEventsQuery)
    .output(trusted(ListEventsResponse))
    .query(async ({ ctx, input }) => {
      const queries = eventListQueries(partnerId, input, cursorKey);
      const [count, data] = await Promise.all([run(queries.count), run(queries.data)]);
      const body = eventListResponse(queries, input.limit, data, Number(count[0]?.total ?? 0), cursorKey);
      const { nextCursor } = body.pagination;
      if (nextCursor !== null) ctx.res.setHeader('link', nextPageLink(input, nextCursor));
      return body;
    }),
});

const handler = createOpenApiNodeHttpHandler({ router, createContext: ({ res }) => ({ res }) });

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.end('ok');
    return;
  }
  void handler(req, res);
});
serveUntilTerm(server, sql);
