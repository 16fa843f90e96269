import type { Logger } from '../../kernel/logger.js';
import type { StatsDeps } from '../stats/visitors-by-hour.js';
import { buildDigest } from './digest.js';
import { dueDigests, spikeCandidates } from './due.js';
import type { NoticeMerchant } from './notice-merchant.js';
import { sendStatsNotice } from './send-notice.js';
import { isSpike, measureSpike } from './spike.js';

/** Before every merchant id: where a walk starts. */
export const FIRST_MERCHANT = '00000000-0000-0000-0000-000000000000';

export interface NoticePassOptions {
  /** The instant the pass runs at (tests set it). */
  now: number;
  /** The walk's position: merchants after this id. */
  after?: string;
  /** Merchants per pass (default 20). */
  limit?: number;
  /** Each merchant's deadline (ms, default 20 s): one that does not answer is given up until the next walk. */
  merchantTimeoutMs?: number;
  signal?: AbortSignal;
  logger?: Logger;
}

export interface NoticePassResult {
  /** Notices sent (their outbox rows committed). */
  sent: number;
  /** Merchants whose notice failed this time (their next chance: the next walk). */
  failed: number;
  /** The last merchant looked at: the next pass goes on after it. */
  last: string;
  /** False once the walk reached its end. */
  more: boolean;
}

/** `work` with a deadline: past it, a rejection (the work itself ends by its own deadlines). */
function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Runs `each` over the merchants one at a time, each under its deadline; a failure is logged, never thrown. */
async function walk<M extends NoticeMerchant>(
  merchants: readonly M[],
  options: NoticePassOptions,
  what: string,
  each: (merchant: M) => Promise<boolean>,
): Promise<NoticePassResult> {
  const limit = options.limit ?? 20;
  const result: NoticePassResult = { sent: 0, failed: 0, last: options.after ?? FIRST_MERCHANT, more: false };
  for (const merchant of merchants) {
    if (options.signal?.aborted) return { ...result, more: true };
    try {
      if (await withDeadline(each(merchant), options.merchantTimeoutMs ?? 20_000, what)) result.sent += 1;
    } catch (error) {
      result.failed += 1;
      options.logger?.warn(
        { err: error, merchantId: merchant.merchantId },
        `${what}: failed; retried on the next walk`,
      );
    }
    result.last = merchant.merchantId;
  }
  return { ...result, more: merchants.length >= limit };
}

/**
 * One page of the digest walk: the merchants owed last week's digest at `now` (Monday 06:00 to
 * Tuesday 06:00 in their zone), each built from the stats use cases and sent once.
 */
export async function sendDueDigests(deps: StatsDeps, options: NoticePassOptions): Promise<NoticePassResult> {
  const due = await dueDigests(deps.db, new Date(options.now), options.after ?? FIRST_MERCHANT, options.limit ?? 20);
  return walk(due, options, 'stats digest', async (merchant) => {
    const week = { startDate: merchant.startDate, endDate: merchant.endDate };
    const data = await buildDigest(deps, merchant, week);
    return (await sendStatsNotice(deps.db, merchant, { kind: 'digest', period: week.startDate, data })) !== null;
  });
}

/**
 * One page of the spike walk over the hour starting at `hourStart`: each merchant whose partner
 * watches for spikes and that had none that local day, its hour against the same hour of the four
 * weeks before; a spike is sent once (a second on the same day is refused by the notice's key).
 */
export async function checkSpikes(
  deps: StatsDeps,
  hourStart: number,
  options: NoticePassOptions,
): Promise<NoticePassResult> {
  const merchants = await spikeCandidates(deps.db, hourStart, options.after ?? FIRST_MERCHANT, options.limit ?? 20);
  return walk(merchants, options, 'stats spike', async (merchant) => {
    const data = await measureSpike(deps, merchant, hourStart, merchant.multiple);
    if (!isSpike(data)) return false;
    return (await sendStatsNotice(deps.db, merchant, { kind: 'spike', period: merchant.period, data })) !== null;
  });
}
