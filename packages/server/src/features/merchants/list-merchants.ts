import { buildPagination, type ListMerchantsResponse } from '@partner/shared-schemas';
import { type Query, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { readRows, toQuery } from '../../db/read-rows.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { merchantJson } from './merchant-json.js';

export interface ListMerchantsParams {
  page: number;
  limit: number;
}

/**
 * One statement, one round trip: the page of merchants with their tags as JSON, and the partner's merchant count. No
 * row yet: the partner never created one.
 */
export function merchantListQuery(partnerId: string, { page, limit }: ListMerchantsParams): SQL {
  return sql`select
    coalesce((select merchants from partner_usage where partner_id = ${partnerId}::uuid), 0)::float8 as total,
    coalesce((
      select json_agg(${merchantJson('p', sql`pt.livemode`)} order by p.created_at, p.id)
      from (
        select id, name, created_at, retention_days, timezone from merchants where partner_id = ${partnerId}::uuid and deleted_at is null
        order by created_at, id limit ${limit} offset ${(page - 1) * limit}
      ) p cross join (select livemode from partners where id = ${partnerId}::uuid) pt
    ), '[]'::json)::text as merchants`;
}

/** The statement's text does not depend on its parameters: rendered once, not per request. */
const MERCHANT_LIST_TEXT = toQuery(
  merchantListQuery('00000000-0000-0000-0000-000000000000', { page: 1, limit: 1 }),
).sql;

/** The statement as SQL text and parameters, in the order `merchantListQuery` binds them. */
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
