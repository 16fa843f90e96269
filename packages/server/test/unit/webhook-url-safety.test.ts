import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { blockedAddressReason, checkWebhookUrlSyntax, safeLookup } from '../../src/features/webhooks/url-safety.js';
import { WebhookHostResolver } from '../../src/runtime/webhook-host-resolver.js';

const strict = { allowPrivate: false };

const refusal = (url: string) => {
  try {
    checkWebhookUrlSyntax(url, strict);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
};

describe('webhook URL safety', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111'])('accepts the public address %s', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('names the rule a URL breaks', () => {
    expect(refusal('http://hooks.example.com/x')).toMatch(/^url: must use https/);
    expect(refusal('https://user:pw@hooks.example.com/x')).toMatch(/credentials/);
    expect(refusal('https://127.0.0.1/x')).toMatch(/loopback, private, link-local, metadata.*127\.0\.0\.1 is loopback/);
    expect(refusal('https://[::1]:8443/x')).toMatch(/::1 is loopback/);
    expect(refusal('https://169.254.169.254/latest/meta-data')).toMatch(/linkLocal/);
    expect(refusal('https://localhost/x')).toMatch(/loopback host/);
    expect(refusal('https://api.localhost/x')).toMatch(/loopback host/);
    expect(refusal('https://[::ffff:a00:1]/x')).toMatch(/private/);
    expect(refusal('nope')).toMatch(/absolute URL/);
    expect(refusal('https://hooks.example.com/partner-tags?x=1')).toBeNull();
  });

  it('WEBHOOK_ALLOW_PRIVATE_URLS lifts the scheme and address rules, not the others', () => {
    expect(checkWebhookUrlSyntax('http://127.0.0.1:8080/hook', { allowPrivate: true }).toString()).toBe(
      'http://127.0.0.1:8080/hook',
    );
    expect(() => checkWebhookUrlSyntax('ftp://127.0.0.1/x', { allowPrivate: true })).toThrow(/http or https/);
  });

  it('the connection lookup refuses a name that resolves to a private address (send-time check)', async () => {
    const resolver = new WebhookHostResolver({ timeoutMs: 3000, maxInFlight: 4 });
    const lookup = (allowPrivate: boolean) =>
      new Promise<{ error: Error | null; addresses: string | LookupAddress[] }>((resolve) =>
        safeLookup({ allowPrivate, resolver })('localhost', { all: true }, (error, addresses) =>
          resolve({ error, addresses }),
        ),
      );
    const refused = await lookup(false);
    expect(refused.error?.message).toMatch(/refused: localhost resolves to a non-public address/);
    const allowed = await lookup(true);
    expect(allowed.error).toBeNull();
    expect((allowed.addresses as LookupAddress[]).length).toBeGreaterThan(0);
  });
});
