import { type SQL, sql } from 'drizzle-orm';

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/** A merchant row as the API's Merchant JSON, its tags in creation order. */
export function merchantJson(row: string, livemode: SQL): SQL {
  const m = sql.identifier(row);
  return sql`json_build_object(
        'merchantId', ${m}.id,
        'name', ${m}.name,
        'livemode', ${livemode},
        'createdAt', to_char(${m}.created_at at time zone 'UTC', ${ISO}),
        'retentionDays', ${m}.retention_days,
        'timezone', ${m}.timezone,
        'tags', coalesce((
          select json_agg(json_build_object(
            'hostname', t.domain,
            'tagId', t.id,
            'status', t.status,
            'createdAt', to_char(t.created_at at time zone 'UTC', ${ISO}),
            'livemode', ${livemode},
            'isConnected', t.is_connected,
            'isVerified', t.is_verified
          ) order by t.created_at, t.id)
          from tags t where t.merchant_id = ${m}.id
        ), '[]'::json)
      )`;
}
