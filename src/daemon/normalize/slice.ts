/**
 * Reading one file in slices, in parallel, with the same result as reading it in one go.
 *
 * A slice after the first is read by a fresh normalizer, which cannot know what the lines before it
 * left behind (the cwd, the last timestamp, a response still being joined, the tool_uses whose
 * results come later). It records what it had to assume instead (`SliceAssumptions`); once the slice
 * before it is read exactly, its end state (`SliceState`) says whether the assumptions held
 * (`sliceFollows`). When they did not, the slice is read again, exactly, after its predecessor.
 */
import type { NormalizedEvent } from "../../shared/event.ts";
import type { ToolUseInfo } from "./types.ts";

/** What a normalizer carries from one line to the next, as far as a following slice can notice it. */
export interface SliceState {
  cwd: string | null;
  lastTimestamp: string;
  /** The message id of a response still being joined, or null. */
  pendingMsgId: string | null;
  /** That response already has its cwd and timestamp (it is released as is, whoever flushes it). */
  pendingComplete: boolean;
  /** Events still waiting for a cwd or a timestamp. */
  waiting: number;
}

/** What a normalizer that started in the middle of a file took for granted. */
export interface SliceAssumptions {
  /** A record without cwd used the (unknown) cwd of earlier lines. */
  usedInitialCwd: boolean;
  /** A record without a valid timestamp used the (unknown) timestamp of earlier lines. */
  usedInitialTimestamp: boolean;
  /** Whether a turn record (user, assistant, system, summary) was seen, and the message id of the first one when it is an assistant record. */
  sawTurn: boolean;
  firstTurnMsgId: string | undefined;
  /** tool_use ids whose results came without the tool_use in this normalizer's memory. */
  missedToolIds: string[];
  /** tool_uses read since the last report: what a later tool_result needs of them (`compactToolUse`). */
  toolUses: Array<[id: string, info: ToolUseInfo]>;
}

/** What a normalizer that reads on after other normalizers needs to know of the lines before. */
export interface SliceSeed {
  cwd: string | null;
  lastTimestamp: string;
  toolUses: Array<[id: string, info: ToolUseInfo]>;
}

/** The part of a tool_use a tool_result is normalized with: its name, command and paths. */
export function compactToolUse(info: ToolUseInfo): ToolUseInfo {
  const input = info.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return { tool: info.tool, input: undefined };
  const src = input as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const k of ["command", "file_path", "notebook_path", "absolute_path", "path"]) {
    const v = src[k];
    if (typeof v === "string") out[k] = v;
  }
  return { tool: info.tool, input: out };
}

/** A normalizer that can be read in slices. */
export interface SliceAware {
  sliceState(): SliceState;
  sliceAssumptions(): SliceAssumptions;
  /**
   * Exactly what `flush()` would release now, without releasing it; null when that cannot be told
   * without flushing. Lets the next slice go in without a round trip to this normalizer's thread.
   */
  flushPreview(): NormalizedEvent[] | null;
  /**
   * Fill in what this normalizer, started in the middle of the file, lacks of the exact state:
   * cwd and timestamp when it never saw one, tool_uses it never saw.
   */
  seed(seed: SliceSeed): void;
}

export function isSliceAware(n: object): n is SliceAware {
  const a = n as Partial<SliceAware>;
  return (
    typeof a.sliceState === "function" &&
    typeof a.sliceAssumptions === "function" &&
    typeof a.flushPreview === "function" &&
    typeof a.seed === "function"
  );
}

/** The exact state after a slice read from a fresh normalizer that held, given the exact state before it. */
export function stateAfter(before: SliceState, slice: SliceState): SliceState {
  return { ...slice, cwd: slice.cwd ?? before.cwd, lastTimestamp: slice.lastTimestamp || before.lastTimestamp };
}

/**
 * Does a slice read from a fresh normalizer give exactly what reading on from `prev` would have
 * given? `toolIdsBefore`: every tool_use id of the lines before the slice.
 */
export function sliceFollows(
  prev: SliceState,
  next: SliceAssumptions,
  toolIdsBefore: { has(id: string): boolean },
): boolean {
  if (prev.waiting > 0) return false; // they would have been released with a cwd of this slice
  if (next.usedInitialCwd && prev.cwd !== null) return false;
  if (next.usedInitialTimestamp && prev.lastTimestamp !== "") return false;
  if (prev.pendingMsgId !== null) {
    // the pending response is released by the slice's first turn record, unless that one continues it
    if (!prev.pendingComplete || !next.sawTurn || next.firstTurnMsgId === prev.pendingMsgId) return false;
  }
  for (const id of next.missedToolIds) if (toolIdsBefore.has(id)) return false;
  return true;
}
