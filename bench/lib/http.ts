import http from 'node:http';

export interface HttpResult {
  status: number;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One request over a keep-alive connection. */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export async function requestJson<T>(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; expect?: number } = {},
): Promise<T> {
  const res = await request(url, {
    method: options.method ?? 'GET',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const expected = options.expect ?? 200;
  if (res.status !== expected)
    throw new Error(`${options.method ?? 'GET'} ${url}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as T;
}

export function closeAgent(): void {
  agent.destroy();
}
