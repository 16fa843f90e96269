import { randomUUID } from 'node:crypto';
import type { CreateMerchantResponse } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError, databaseUnavailability, databaseUnavailable } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import type { PartnerCaps } from '../partners/caps.js';

/**
 * Creates a merchant; 409 LIMIT_EXCEEDED once the partner has MAX_MERCHANTS_PER_PARTNER. The
 * partner's count (`partner_usage`) goes up in the transaction that inserts the merchants, only
 * while below the cap; its row lock orders one partner's creates and costs the same at any size
 * (counting the partner's merchants each time grew with them).
 *
 * Group commit per partner in this process: the creates that arrive while one transaction holds
 * the row are written together by the next (one lock, one commit for all of them). One create per
 * transaction held the row to each commit: under the mix, creates queued on it inside PostgreSQL,
 * each holding a pool connection (merchant create alone 60 vs 306 req/s of 129bee5; issue 37).
 * Across processes the row still orders the transactions. Every wait is bounded by the
 * statements' deadlines of the batches ahead.
 */
export function createMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  caps: Pick<PartnerCaps, 'maxMerchants'>,
  input: { name: string },
): Promise<CreateMerchantResponse> {
  return new Promise((resolve, reject) => {
    let queue = queues.get(partner.id);
    if (!queue) {
      queue = [];
      queues.set(partner.id, queue);
    }
    queue.push({ name: input.name, resolve, reject });
    // The first create of an idle partner starts the writer; later ones join its next batch.
    if (queue.length === 1 && !writing.has(partner.id)) void writeCreates(db, partner.id, caps.maxMerchants);
  });
}

interface PendingCreate {
  name: string;
  resolve(answer: CreateMerchantResponse): void;
  reject(error: unknown): void;
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
          batch.map((c) => c.name),
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

/** One transaction: the count locked, raised by what fits under the cap, and those merchants inserted in order. */
async function insertMerchants(db: Database, partnerId: string, maxMerchants: number, names: string[]) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`
      insert into partner_usage (partner_id, merchants) values (${partnerId}::uuid, 0) on conflict (partner_id) do nothing`);
    const [usage] = rowsOf<{ merchants: number }>(
      await tx.execute(sql`select merchants from partner_usage where partner_id = ${partnerId}::uuid for update`),
    );
    const granted = Math.max(0, Math.min(names.length, maxMerchants - Number(usage?.merchants ?? 0)));
    if (granted === 0) return [];
    const ids = names.slice(0, granted).map(() => randomUUID());
    // As JSON (one parameter, the same on postgres.js and PGlite), inserted in the callers' order.
    const rows = JSON.stringify(ids.map((id, i) => ({ id, name: names[i] })));
    await tx.execute(sql`
      with counted as (
        update partner_usage set merchants = merchants + ${granted}::int where partner_id = ${partnerId}::uuid
      )
      insert into merchants (id, partner_id, name)
      select t.id, ${partnerId}::uuid, t.name from json_to_recordset(${rows}::json) as t(id uuid, name text)`);
    return ids;
  });
}
