import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { deleteLogStream as deleteStream, logNames } from '../../src/runtime/event-log.js';
import { tcpAnswers } from './hardening.js';

/** The machine's NATS (JetStream on), or NATS_TEST_URL. */
export const NATS_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
const natsPort = () => Number(new URL(NATS_URL.replace(/^nats:/, 'http:')).port || 4222);

export const natsAnswers = () => tcpAnswers('127.0.0.1', natsPort());
export { natsPort };

/** A prefix of our own for this run: the NATS server is shared by everyone on the machine. */
export function uniqueLogPrefix(): string {
  return `t_log_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** Deletes the stream (and so its consumer) a test created under `prefix`. */
export const deleteLogStream = (prefix: string): Promise<void> => deleteStream(NATS_URL, prefix);

/** Messages still in the stream (not yet drained). */
export async function logBacklog(prefix: string): Promise<number> {
  const nc = await connect({ servers: NATS_URL, timeout: 2_000 });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(logNames(prefix).stream)).state.messages;
  } finally {
    await nc.close();
  }
}

/** Polls `check` every 50 ms until it returns true, or throws after `ms`. */
export async function waitFor(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
