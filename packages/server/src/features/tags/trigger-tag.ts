import type { Tag, TriggerableTagEvent } from '@partner/shared-schemas';
import type { Database } from '../../db/client.js';
import type { TagRow } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { checkTagRecord } from './dns-check.js';
import { findOwnTag } from './find-own-tag.js';
import { recordTagEvents } from './lifecycle/tag-activity.js';
import { applyCheck, type TagStateConfig } from './lifecycle/tag-state.js';
import { simulatedResolver } from './simulated-dns.js';
import { getTag, readTagWithPartner } from './tag-view.js';

/** The simulated zone answers at once; the check's budget is never spent. */
const ZONE_BUDGET_MS = 1000;

/** Why `event` cannot follow from the tag's state, or null when it can. */
function conflictOf(tag: TagRow, event: TriggerableTagEvent): string | null {
  if (event === 'tag.activated') {
    if (tag.firstEventAt) return 'the tag already received its first event';
    if (tag.domainType === 'custom' && !tag.isVerified)
      return 'a custom tag takes events once verified: verify it first';
    return null;
  }
  if (tag.domainType !== 'custom') return `a preverified tag has no record of its own to lose (${event})`;
  if (!tag.isVerified) return 'the tag is not verified yet: verify it first (in test mode the domain verifies)';
  if (event === 'tag.disconnected' && !tag.isConnected) return 'the tag is already disconnected';
  if (event === 'tag.reconnected' && tag.isConnected) return 'the tag is connected: trigger tag.disconnected first';
  return null;
}

/** Test mode's `trigger`: drives a test tag into the state `event` names through the transitions live tags take. */
export async function triggerTagEvent(
  db: Database,
  partner: AuthenticatedPartner,
  config: TagStateConfig,
  input: { tagId: string; event: TriggerableTagEvent },
): Promise<Tag> {
  if (partner.livemode) {
    throw new AppError('TEST_MODE_ONLY', 'Triggers are for test mode: call this with an mp_test_ key.');
  }
  const tag = await findOwnTag(db, partner, input.tagId);
  const conflict = conflictOf(tag, input.event);
  if (conflict) throw new AppError('TAG_STATE_CONFLICT', `Cannot trigger ${input.event}: ${conflict}`);
  if (input.event === 'tag.activated') {
    await recordTagEvents(db, [tag.id], config);
  } else {
    const reason = input.event === 'tag.disconnected' ? 'RECORD_NOT_FOUND' : null;
    const zone = simulatedResolver(tag, config.tagTargetHost, ZONE_BUDGET_MS, reason);
    await applyCheck(db, config, tag.id, await checkTagRecord(zone, tag, config.tagTargetHost), { kind: 'trigger' });
  }
  return getTag(db, partner, config, { tagId: tag.id });
}

/**
 * `pnpm partner trigger <event> --tag <id>`: the same trigger for an operator, by tag id alone. The tag must be a
 * test-mode tag.
 */
export async function triggerTagEventByOperator(
  db: Database,
  config: TagStateConfig,
  input: { tagId: string; event: TriggerableTagEvent },
): Promise<Tag> {
  const found = /^[0-9a-f-]{36}$/i.test(input.tagId) ? await readTagWithPartner(db, input.tagId) : undefined;
  if (!found) throw new AppError('TAG_NOT_FOUND', `No tag ${input.tagId}`);
  const { partner } = found;
  return triggerTagEvent(db, { ...partner, name: '' }, config, input);
}
