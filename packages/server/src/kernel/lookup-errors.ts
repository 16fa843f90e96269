// What the runtime's resolvers throw and the use cases catch: here, so that features/ import only
// the resolvers' types.

/** DNS is not answering (as opposed to answering "no such record"). */
export class DnsUnavailableError extends Error {
  override name = 'DnsUnavailableError';
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`DNS resolver unavailable (${detail})`, options);
  }
}

/** Every webhook lookup slot is taken and as many lookups already wait: refused at once. */
export class WebhookLookupBusyError extends Error {
  override name = 'WebhookLookupBusyError';
  readonly code = 'EWEBHOOKDNSBUSY';
}
