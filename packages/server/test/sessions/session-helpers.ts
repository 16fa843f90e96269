import type { TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api, type Json } from '../helpers/api.js';

export const ORIGIN = 'https://admin.partner.example';
export const OTHER_ORIGIN = 'https://evil.example';

export interface CreatedSession {
  token: string;
  merchantId: string;
  allowedOrigins: string[];
  expiresAt: string;
}

/** `POST /v1/partners/merchant/{merchantId}/sessions` with the partner key; throws unless 201. */
export async function createSession(
  server: TestServer,
  key: string,
  merchantId: string,
  body: Json = { allowedOrigins: [ORIGIN] },
): Promise<CreatedSession> {
  const res = await api(server, key).post(`/v1/partners/merchant/${merchantId}/sessions`, body);
  if (res.status !== 201) throw new Error(`create session: ${res.status} ${res.text}`);
  return res.body as CreatedSession;
}

/** A summary query over the last week for `merchantId`. */
export function summaryPath(merchantId: string): string {
  const today = new Date().toISOString().slice(0, 10);
  const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  return `/v1/partners/stats/summary?merchantId=${merchantId}&startDate=${weekAgo}&endDate=${today}&timezone=UTC`;
}

/** Every `access-control-*` header of a response. */
export function corsHeaders(res: ApiResponse): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

/** Polls `probe` until it answers `expected`; returns how long that took. */
export async function until(probe: () => Promise<number>, expected: number, withinMs: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    if ((await probe()) === expected) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`still not ${expected} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
