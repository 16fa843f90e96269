import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hotListOutput } from '../../src/routes/hot-list-output.js';

const Page = z
  .object({ data: z.array(z.object({ id: z.string(), at: z.string() })), total: z.number() })
  .meta({ id: 'TestPage', description: 'A page' });

describe('hotListOutput (sources: parsed, and must come out unchanged)', () => {
  const view = hotListOutput(Page);

  it('passes an answer of exactly the shape, the same object back', () => {
    const answer = { data: [{ id: 'a', at: '2026-11-24T00:00:00.000Z' }], total: 1 };
    expect(view.parse(answer)).toBe(answer);
  });

  it('refuses an answer the schema would strip (an extra key never leaves unnoticed)', () => {
    expect(() => view.parse({ data: [{ id: 'a', at: 'x', secret: 'other partner' }], total: 1 })).toThrow(
      /changed by its output schema/,
    );
  });

  it('refuses an answer of the wrong shape', async () => {
    await expect(view.parseAsync({ data: [{ id: 1 }], total: 1 })).rejects.toThrow();
  });

  it('documents exactly as the schema (same JSON Schema, same registry id and description)', () => {
    expect(z.toJSONSchema(view)).toEqual(z.toJSONSchema(Page));
    expect(z.globalRegistry.get(view)).toEqual({ id: 'TestPage', description: 'A page' });
  });
});
