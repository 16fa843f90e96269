/**
 * The framework floor: `GET /v1/partners/merchant` for one partner (PARTNER_ID) served the way the
 * API serves it (a tRPC v11 procedure with the same input schema, behind trpc-to-openapi's
 * node:http adapter, both with the workspace's patches) running the same statement over
 * postgres.js and writing the same JSON, and nothing else: no authentication, rate limits,
 * middleware, request ids, security headers, metrics or logging. The bare server against this one
 * is what the mandated stack costs by itself; this one against the API is what our own request path
 * adds.
 */
import http from 'node:http';
import { merchantListSql } from '@partner/server/bench';
import { buildPagination, ListMerchantsQuery, ListMerchantsResponse } from '@partner/shared-schemas';
import { initTRPC } from '@trpc/server';
import postgres from 'postgres';
import { createOpenApiNodeHttpHandler, type OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';

const url = process.env.DATABASE_URL ?? '';
const partnerId = process.env.PARTNER_ID ?? '';
if (!url || !partnerId) throw new Error('DATABASE_URL and PARTNER_ID are required');
const sql = postgres(url, { max: Number(process.env.DB_POOL_MAX ?? 6), onnotice: () => {} });

const t = initTRPC.meta<OpenApiMeta>().create();
// The output schema as the API's compiled build gives it to tRPC: documented, not parsed (hot-list-output.ts).
const trustedOutput = Object.create(ListMerchantsResponse, {
  parse: { value: (value: unknown) => value },
  parseAsync: { value: async (value: unknown) => value },
}) as typeof ListMerchantsResponse;

const router = t.router({
  list: t.procedure
    .meta({ openapi: { method: 'GET', path: '/v1/partners/merchant' } })
    .input(ListMerchantsQuery)
    .output(trustedOutput)
    .query(async ({ input }) => {
      const page = input.page ?? 1;
      const limit = input.limit ?? 10;
      const query = merchantListSql(partnerId, { page, limit });
      const [row] = await sql.unsafe(query.sql, query.params as never[], { prepare: true });
      return {
        merchants: row
          ? (JSON.parse(row.merchants as string) as z.infer<typeof ListMerchantsResponse>['merchants'])
          : [],
        pagination: buildPagination(page, limit, Number(row?.total ?? 0)),
      };
    }),
});

const handler = createOpenApiNodeHttpHandler({ router, createContext: () => ({}) });

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.end('ok');
    return;
  }
  void handler(req, res);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void sql.end({ timeout: 2 }).then(() => process.exit(0));
});
