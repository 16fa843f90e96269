import { randomUUID } from 'node:crypto';
import type { CreateMerchantResponse } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError, databaseUnavailability, databaseUnavailable } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import type { PartnerCaps } from '../partners/caps.js';
import { assertZoneKnown } from './merchant-zone.js';

/** Creates a merchant; 409 LIMIT_EXCEEDED once the partner has MAX_MERCHANTS_PER_PARTNER. */
export function createMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  caps: Pick<PartnerCaps, 'maxMerchants'>,
  input: { name: string; timezone?: string | undefined },
): Promise<CreateMerchantResponse> {
  const timezone = input.timezone ?? 'UTC';
  if (timezone !== 'UTC')
    return assertZoneKnown(db, timezone).then(() => queueCreate(db, partner, caps, input.name, timezone));
  return queueCreate(db, partner, caps, input.name, timezone);
}

function queueCreate(
  db: Database,
  partner: AuthenticatedPartner,
  caps: Pick<PartnerCaps, 'maxMerchants'>,
  name: string,
  timezone: string,
): Promise<CreateMerchantResponse> {
  return new Promise((resolve, reject) => {
    let queue = queues.get(partner.id);
    if (!queue) {
      queue = [];
      queues.set(partner.id, queue);
    }
    queue.push({ name, timezone, resolve, reject });
    // The first create of an idle partner starts the writer; later ones join its next batch.
    if (queue.length === 1 && !writing.has(partner.id)) void writeCreates(db, partner.id, caps.maxMerchants);
  });
}

interface PendingCreate {
  name: string;
  timezone: string;
  resolve(answer: CreateMerchantResponse): void;
  reject(error: unknown): void;
}

/** A merchant to insert: its name and canonical zone. */
interface NewMerchant {
  name: string;
  timezone: string;
}

/** Creates waiting per partner, and the partners whose writer is running (this process). */
const queues = new Map<string, PendingCreate[]>();
const writing = new Set<string>();
/** Creates per transaction at most. */
const MAX_BATCH = 100;

async function writeCreates(db: Database, partnerId: string, maxMerchants: number): Promise<void> {
  writing.add(partnerId);
  try {
    for (let queue = queues.get(partnerId); queue && queue.length > 0; queue = queues.get(partnerId)) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const ids = await insertMerchants(
          db,
          partnerId,
          maxMerchants,
          batch.map((c) => ({ name: c.name, timezone: c.timezone })),
        );
        batch.forEach((create, i) => {
          const id = ids[i];
          if (id) create.resolve({ merchantId: id });
          else
            create.reject(
              new AppError('LIMIT_EXCEEDED', `partner has reached MAX_MERCHANTS_PER_PARTNER (${maxMerchants})`),
            );
        });
      } catch (error) {
        for (const create of batch) create.reject(error);
        // The creates still queued were never sent: with the database unavailable they fail now
        // (503, surely not applied), not each after another deadline of its own.
        if (databaseUnavailability(error)) {
          const waiting = queue.splice(0);
          for (const create of waiting) create.reject(databaseUnavailable(error));
        }
      }
    }
  } finally {
    writing.delete(partnerId);
    if (queues.get(partnerId)?.length === 0) queues.delete(partnerId);
  }
}

/** The count locked, raised by what fits under the cap, and those merchants inserted in order. */
async function insertMerchants(db: Database, partnerId: string, maxMerchants: number, names: NewMerchant[]) {
  const ids = names.map(() => randomUUID());
  const granted = await grantAndInsert(db, partnerId, maxMerchants, ids, names);
  if (granted !== undefined) return ids.slice(0, granted);
  // The partner's first merchant: its usage row, then the same statement again.
  await db.execute(sql`
    insert into partner_usage (partner_id, merchants) values (${partnerId}::uuid, 0) on conflict (partner_id) do nothing`);
  return ids.slice(0, (await grantAndInsert(db, partnerId, maxMerchants, ids, names)) ?? 0);
}

/** Read committed: a create committed by another process meanwhile is seen by the lock and by the update. */
async function grantAndInsert(
  db: Database,
  partnerId: string,
  maxMerchants: number,
  ids: string[],
  names: NewMerchant[],
): Promise<number | undefined> {
  // As JSON (one parameter, the same on postgres.js and PGlite), with each row's place.
  const rows = JSON.stringify(ids.map((id, i) => ({ id, name: names[i]?.name, timezone: names[i]?.timezone, i })));
  const [row] = rowsOf<{ granted: number | null }>(
    await db.execute(sql`
      with usage as (
        select greatest(0, least(${ids.length}::int, ${maxMerchants}::int - merchants)) as n
        from partner_usage where partner_id = ${partnerId}::uuid for update
      ), inserted as (
        insert into merchants (id, partner_id, name, timezone)
        select t.id, ${partnerId}::uuid, t.name, t.timezone
        from json_to_recordset(${rows}::json) as t(id uuid, name text, timezone text, i int), usage
        where t.i < usage.n
        order by t.i
      ), counted as (
        update partner_usage set merchants = merchants + usage.n
        from usage where partner_id = ${partnerId}::uuid and usage.n > 0
      )
      select (select n from usage) as granted`),
  );
  const granted = row?.granted;
  return granted == null ? undefined : Number(granted);
}
