/**
 * How busy the other processes keep this machine's cores: the check behind running part of an ingest
 * on another thread (ingest-workers.ts, insert-pipe.ts), which only pays off with a core to spare.
 */
import { cpus } from "node:os";

export interface CpuSample {
  at: number;
  /** Busy CPU time of the whole machine, ms. */
  busy: number;
  /** CPU time of this process (every thread), ms. */
  ours: number;
}

export function cpuSample(): CpuSample {
  let busy = 0;
  for (const c of cpus()) busy += c.times.user + c.times.nice + c.times.sys + c.times.irq;
  const u = process.cpuUsage();
  return { at: performance.now(), busy, ours: (u.user + u.system) / 1000 };
}

/** Cores kept busy by other processes between two samples, on average. */
export function othersBusyBetween(from: CpuSample, to: CpuSample): number {
  const elapsed = to.at - from.at;
  if (elapsed <= 0) return 0;
  return Math.max(0, to.busy - from.busy - (to.ours - from.ours)) / elapsed;
}

let lastSample: CpuSample | null = null;

/** Cores kept busy by other processes since the last call (the first call looks for 100 ms). */
export function othersBusyCores(): number {
  let from = lastSample;
  if (!from || performance.now() - from.at < 100) {
    from = cpuSample();
    Bun.sleepSync(100);
  }
  const now = cpuSample();
  lastSample = now;
  return othersBusyBetween(from, now);
}
