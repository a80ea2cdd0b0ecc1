/**
 * What every read endpoint needs besides its request: the project's open data.db, the token counter,
 * the clock and the default budgets from config. Built per request by the engine server (and directly
 * by tests and benchmarks).
 */
import type { Database } from "bun:sqlite";
import type { Embedder } from "../llm/embeddings.ts";
import { defaultCounter, type TokenCounter } from "../../shared/tokens.ts";

export interface RetrievalContext {
  db: Database;
  /** The project's root (its id). */
  projectId: string;
  /** Default user (config `user_id`) when the request names none. */
  userId: string;
  counter: TokenCounter;
  nowMs: number;
  budgets: { task_context: number; view: number; search: number };
  /** ~/.sqrl/user.db, for global style; absent when it does not exist. */
  userDb?: Database;
  /** Embeddings for hybrid similarity, when `embeddings.provider` is set. */
  embedder?: Embedder;
  /** Optional LLM pass over task context candidates (Chain-of-Note). */
  noteTaker?: NoteTaker;
  /** The linked git worktree the caller works in (validated by the server); checks read its files. */
  workTree?: string;
  /** Check memories against the code before serving them (default on; benchmarks turn it off to measure its cost). */
  verify?: boolean;
}

export const DEFAULT_BUDGETS = { task_context: 400, view: 256, search: 600 } as const;

/** One candidate as shown to a Chain-of-Note pass. */
export interface NoteCandidate {
  memory_id: string;
  type: string;
  content: string;
  reason: string;
}

/** An LLM that picks the candidates relevant to a task and says why (ids it returns must be candidates). */
export interface NoteTaker {
  pick(task: string, candidates: readonly NoteCandidate[]): Promise<Array<{ memory_id: string; reason: string }>>;
}

export function retrievalContext(
  db: Database,
  projectId: string,
  over: Partial<RetrievalContext> = {},
): RetrievalContext {
  return {
    db,
    projectId,
    userId: over.userId ?? "user",
    counter: over.counter ?? defaultCounter,
    nowMs: over.nowMs ?? Date.now(),
    budgets: over.budgets ?? { ...DEFAULT_BUDGETS },
    ...(over.userDb ? { userDb: over.userDb } : {}),
    ...(over.embedder ? { embedder: over.embedder } : {}),
    ...(over.noteTaker ? { noteTaker: over.noteTaker } : {}),
    ...(over.verify === false ? { verify: false } : {}),
    ...(over.workTree ? { workTree: over.workTree } : {}),
  };
}
