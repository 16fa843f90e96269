import http from 'node:http';

export interface HttpResult {
  status: number;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

type RequestOptions = { method?: string; headers?: Record<string, string>; body?: string };

/**
 * One request over a keep-alive connection. A kept socket the server closed as the request went
 * out (its 5 s keep-alive timeout) resets before any answer: sent again once on a new socket, as
 * Node's docs advise (`reusedSocket`). The server never read it, so a POST is not done twice.
 */
export function request(url: string, options: RequestOptions = {}, retried = false): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && error.code === 'ECONNRESET') {
        request(url, options, true).then(resolve, reject);
        return;
      }
      reject(error);
    });
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
