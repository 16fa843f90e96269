import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from './authenticate.js';

const SESSION_SCOPE_MESSAGE = 'A merchant session may only read its own merchant’s statistics and tags';

/** The 403 for anything a merchant session may not do. */
export function sessionScopeError(message = SESSION_SCOPE_MESSAGE): AppError {
  return new AppError('SESSION_SCOPE', message);
}

/** For the procedures a session may call: a session reads its own merchant only. An API key passes. */
export function assertSessionMerchant(partner: AuthenticatedPartner, merchantId: string): void {
  if (partner.session && partner.session.merchantId !== merchantId) {
    throw sessionScopeError('This merchant session belongs to another merchant');
  }
}
