// Tag domain classification (features/tags/domains.ts): the partner's domain or under it is
// preverified; anything else must be a registrable root domain (custom), else 400.
import { describe, expect, it } from 'vitest';
import { classifyDomain, rootDomainOf } from '../../src/features/tags/domains.js';
import { AppError, errorResponse } from '../../src/kernel/errors.js';

describe('classifyDomain', () => {
  it.each([
    ['partner.com', 'preverified'],
    ['shop.partner.com', 'preverified'],
    ['a.b.partner.com', 'preverified'],
    ['example.com', 'custom'],
    ['example.co.uk', 'custom'],
    ['notpartner.com', 'custom'],
  ])('%s under partner.com -> %s', (domain, type) => {
    expect(classifyDomain(domain, 'partner.com')).toBe(type);
  });

  it.each([
    ['shop.example.com', 'sub-domain of example.com'],
    ['co.uk', 'public suffix'],
    ['example.invalidtld', 'known public suffix'],
  ])('%s is refused with 400 VALIDATION_ERROR naming the rule', (domain, rule) => {
    let error: unknown;
    try {
      classifyDomain(domain, 'partner.com');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    const { status, body } = errorResponse(error as AppError);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.message).toContain(rule);
  });

  it('rootDomainOf: registrable root by the public suffix list (private suffixes too)', () => {
    expect(rootDomainOf('a.b.example.co.uk')).toBe('example.co.uk');
    expect(rootDomainOf('shop.github.io')).toBe('shop.github.io');
    expect(rootDomainOf('co.uk')).toBeNull();
  });
});
