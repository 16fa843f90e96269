import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** What the receiver answers: a status code, or `hang` (never answers; the sender's deadline ends it). */
export type ReceiverAnswer = number | 'hang';

export interface TestWebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` (use WEBHOOK_ALLOW_PRIVATE_URLS=true on the server). */
  url: string;
  received: ReceivedWebhook[];
  /** Answers for the next requests, in order; afterwards `fallback` (default 200). */
  answer(...answers: ReceiverAnswer[]): void;
  fallback: ReceiverAnswer;
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP webhook receiver on loopback that records every request. */
export async function startWebhookReceiver(): Promise<TestWebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const queue: ReceiverAnswer[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<http.ServerResponse>();
  const receiver = {
    fallback: 200 as ReceiverAnswer,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
      for (const wake of waiters) wake();
      const answer = queue.shift() ?? receiver.fallback;
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer: (...answers: ReceiverAnswer[]) => {
      queue.push(...answers);
    },
    waitFor: (count: number, timeoutMs = 15_000) =>
      new Promise<ReceivedWebhook[]>((resolve, reject) => {
        const check = () => {
          if (received.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(received.slice(0, count));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} webhook requests, got ${received.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
