import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';

/**
 * The shutdown phases, in order. Every part's hooks of one phase run before any hook of the next.
 * - `stop-accepting`: listeners take the connections the kernel already completed and stop
 *   listening (waited for: a one-turn wait when idle), then, all in one tick, the drain state makes
 *   every answer close its connection, the event queue stops waiting to batch, the background
 *   loops stop claiming work.
 * - `close-streams`: open event streams end (clients resume elsewhere with their last id).
 * - `drain`: in-flight requests finish (at most the grace period).
 * - `flush`: what was accepted and answered is written (the event queue).
 * - `release`: background work ends and connections close, dependents before what they depend on.
 */
export const STOP_PHASES = ['stop-accepting', 'close-streams', 'drain', 'flush', 'release'] as const;
export type StopPhase = (typeof STOP_PHASES)[number];

export interface StopContext {
  /** How long in-flight requests may take to finish (`close(graceMs)`). */
  graceMs: number;
  /** What is left of the grace period, counted from `stop()`. */
  remainingMs(): number;
}

type StopHook = (context: StopContext) => Promise<void> | void;

/** One long-lived part of an app: a listener, a queue, a background loop, a connection. */
export interface Part {
  /** Names the part in logs and in the shutdown plan. */
  readonly name: string;
  /** Starts the part (listen, consume, loop). A part without `start` is live once built. */
  start?(): Promise<void> | void;
  /** What the part does in each phase it takes part in. */
  readonly stop: Partial<Record<StopPhase, StopHook>>;
  /** Time one stop hook may take past the end of the grace period before it is given up on; default the lifecycle's. */
  readonly stopDeadlineMs?: number;
  /** Registers the metrics this part owns. */
  metrics?(metrics: Metrics): void;
}

export interface LifecycleOptions {
  logger: Logger;
  /** Where the parts register their metrics. */
  metrics: Metrics;
  /** Default `Part.stopDeadlineMs`. */
  stopDeadlineMs?: number;
}

const DEFAULT_STOP_DEADLINE_MS = 10_000;

/** The order in which `stop()` runs the parts' hooks: each phase with its parts. */
export function shutdownPlan(parts: readonly Part[]): { phase: StopPhase; parts: string[] }[] {
  return STOP_PHASES.map((phase) => ({
    phase,
    parts: parts
      .filter((part) => part.stop[phase])
      .map((part) => part.name)
      .reverse(),
  })).filter((step) => step.parts.length > 0);
}

/** Starts parts in list order and stops them in reverse, phase by phase. */
export class Lifecycle {
  private readonly list: Part[] = [];
  private readonly live = new Set<Part>();
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: LifecycleOptions) {}

  get parts(): readonly Part[] {
    return this.list;
  }

  /** Adds parts at the end of the list and registers their metrics. */
  add(...parts: Part[]): void {
    for (const part of parts) {
      if (this.list.some((other) => other.name === part.name)) throw new Error(`part ${part.name} added twice`);
      part.metrics?.(this.options.metrics);
      this.list.push(part);
      if (!part.start) this.live.add(part);
    }
  }

  /** Starts the parts not started yet, in list order. */
  async start(): Promise<void> {
    for (const part of this.list) {
      if (this.live.has(part)) continue;
      try {
        await part.start?.();
      } catch (error) {
        await this.stop(0);
        throw error;
      }
      this.live.add(part);
    }
  }

  /** Stops every live part; calling it again returns the same promise. */
  stop(graceMs: number): Promise<void> {
    const end = performance.now() + graceMs;
    this.stopping ??= this.runStop({ graceMs, remainingMs: () => Math.max(0, end - performance.now()) });
    return this.stopping;
  }

  private async runStop(context: StopContext): Promise<void> {
    const parts = this.list.filter((part) => this.live.has(part)).reverse();
    for (const phase of STOP_PHASES) {
      for (const part of parts) {
        const hook = part.stop[phase];
        if (!hook) continue;
        // What is left of the grace period, plus the part's allowance for its own work past it.
        const deadlineMs =
          Math.ceil(context.remainingMs()) +
          (part.stopDeadlineMs ?? this.options.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS);
        const failed = (error: unknown) =>
          this.options.logger.error({ err: error, part: part.name, phase }, 'stopping a part failed');
        let pending: Promise<void> | void;
        try {
          pending = hook(context);
        } catch (error) {
          failed(error);
          continue;
        }
        if (pending) await withDeadline(pending, deadlineMs, part.name).catch(failed);
      }
    }
  }
}

function withDeadline(pending: Promise<void>, deadlineMs: number, name: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: stop did not end within ${deadlineMs} ms`)), deadlineMs);
  });
  return Promise.race([pending, cut]).finally(() => clearTimeout(timer));
}
