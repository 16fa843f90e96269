import { buildPagination, type ListMerchantsResponse } from '@partner/shared-schemas';
import { type Query, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { readRows, toQuery } from '../../db/read-rows.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

export interface ListMerchantsParams {
  page: number;
  limit: number;
}

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * One statement, one round trip: the page of merchants (creation order, ties by id) with their
 * tags (creation order) as JSON, and the partner's merchant count. The bench's bare node:http
 * baseline runs this same statement.
 */
export function merchantListQuery(partnerId: string, { page, limit }: ListMerchantsParams): SQL {
  return sql`select
    (select count(*) from merchants where partner_id = ${partnerId}::uuid and deleted_at is null)::float8 as total,
    coalesce((
      select json_agg(json_build_object(
        'merchantId', p.id,
        'name', p.name,
        'livemode', pt.livemode,
        'createdAt', to_char(p.created_at at time zone 'UTC', ${ISO}),
        'retentionDays', p.retention_days,
        'tags', coalesce((
          select json_agg(json_build_object(
            'hostname', t.domain,
            'tagId', t.id,
            'status', t.status,
            'createdAt', to_char(t.created_at at time zone 'UTC', ${ISO}),
            'livemode', pt.livemode,
            'isConnected', t.is_connected,
            'isVerified', t.is_verified
          ) order by t.created_at, t.id)
          from tags t where t.merchant_id = p.id
        ), '[]'::json)
      ) order by p.created_at, p.id)
      from (
        select id, name, created_at, retention_days from merchants where partner_id = ${partnerId}::uuid and deleted_at is null
        order by created_at, id limit ${limit} offset ${(page - 1) * limit}
      ) p cross join (select livemode from partners where id = ${partnerId}::uuid) pt
    ), '[]'::json)::text as merchants`;
}

/** The statement's text does not depend on its parameters: rendered once, not per request. */
const MERCHANT_LIST_TEXT = toQuery(
  merchantListQuery('00000000-0000-0000-0000-000000000000', { page: 1, limit: 1 }),
).sql;

/**
 * The statement as SQL text and parameters, in the order `merchantListQuery` binds them (a test
 * holds the two together). What the API and the bench's bare server run.
 */
export function merchantListSql(partnerId: string, { page, limit }: ListMerchantsParams): Query {
  return { sql: MERCHANT_LIST_TEXT, params: [partnerId, partnerId, limit, (page - 1) * limit, partnerId] };
}

/** One page of the partner's live (not deleted) merchants in creation order (stable while new merchants are added). */
export async function listMerchants(
  db: Database,
  partner: AuthenticatedPartner,
  params: ListMerchantsParams,
): Promise<ListMerchantsResponse> {
  const [rows] = await readRows(db, [merchantListSql(partner.id, params)]);
  const row = rows?.[0] as { total: number; merchants: string } | undefined;
  return {
    merchants: row ? (JSON.parse(row.merchants) as ListMerchantsResponse['merchants']) : [],
    pagination: buildPagination(params.page, params.limit, Number(row?.total ?? 0)),
  };
}
