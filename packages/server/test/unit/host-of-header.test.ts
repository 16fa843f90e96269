import { describe, expect, it } from 'vitest';
import { hostOfHeader } from '../../src/features/tags/collector-directory.js';

describe('hostOfHeader', () => {
  it('drops the port and the trailing dot, lower-cases, refuses IP literals and bare names', () => {
    expect(hostOfHeader('Tags.Shop.Example:8443')).toBe('tags.shop.example');
    expect(hostOfHeader('tags.shop.example.')).toBe('tags.shop.example');
    expect(hostOfHeader('127.0.0.1:80')).toBeNull();
    expect(hostOfHeader('[::1]:80')).toBeNull();
    expect(hostOfHeader('localhost')).toBeNull();
    expect(hostOfHeader(undefined)).toBeNull();
    expect(hostOfHeader('')).toBeNull();
  });

  it('answers the same after its memo of headers filled up and was cleared (any client picks the header)', () => {
    for (let i = 0; i < 2_500; i++) {
      expect(hostOfHeader(`T${i}.Shop.Example:${i}`)).toBe(`t${i}.shop.example`);
    }
    expect(hostOfHeader('Tags.Shop.Example:8443')).toBe('tags.shop.example');
    expect(hostOfHeader('10.0.0.1')).toBeNull();
  });
});
