/**
 * Long query text (a search query, a task description) is clipped before ranking: the ranker needs
 * the words of a request, not a pasted file, and an answer never echoes megabytes back. The note
 * says what happened, in the answer's markdown.
 */
import { MAX_QUERY_CHARS } from "../../shared/api.ts";

export interface ClippedQuery {
  text: string;
  /** A line for the answer when the text was clipped. */
  note?: string;
}

export function clipQuery(text: string, max = MAX_QUERY_CHARS): ClippedQuery {
  if (text.length <= max) return { text };
  const cut = text.slice(0, max).replace(/\s+\S*$/, "") || text.slice(0, max);
  return { text: cut, note: `_Query clipped: ranked by its first ${cut.length} of ${text.length} characters._` };
}
