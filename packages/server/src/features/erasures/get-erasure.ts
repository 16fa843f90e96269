import type { Erasure } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { ERASURE_COLUMNS, toErasure } from './erasure-view.js';

/** `GET /v1/partners/erasures/{erasureId}`: its state; another partner's (or a missing one) is 404 ERASURE_NOT_FOUND. */
export async function getErasure(db: Database, partner: AuthenticatedPartner, erasureId: string): Promise<Erasure> {
  const [row] = rowsOf(
    await db.execute(sql`
      select ${ERASURE_COLUMNS} from erasures
      where id = ${erasureId}::uuid and partner_id = ${partner.id}::uuid`),
  );
  if (!row) throw new AppError('ERASURE_NOT_FOUND', `No erasure ${erasureId} under this partner`);
  return toErasure(row);
}
