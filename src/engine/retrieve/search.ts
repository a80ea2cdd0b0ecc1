/**
 * `GET /search_memory` (reference §5.6): the ranker's FTS5 BM25 over code-aware tokens (plus the
 * nearest vectors when embeddings are configured) proposes candidates; they are ordered by
 * 0.6·similarity + 0.2·importance + 0.1·recency + 0.1·path bias (scope_paths), where similarity
 * blends the BM25 score relative to the best hit, the share of query terms matched and, with
 * embeddings, cosine. Each result says why it matched and where it came from.
 */
import { SearchResponse, type SearchQuery } from "../../shared/api.ts";
import { redactText } from "../../shared/privacy/redact.ts";
import { nowIso } from "../../shared/time.ts";
import { packBlocks, type Block } from "./render/budget.ts";
import { lexicalCandidates, loadItems } from "./rank/candidates.ts";
import { queryVector, vectorCandidates } from "./rank/vectors.ts";
import { memoryLine } from "./render/markdown.ts";
import { groupOf, SERVED_HEADINGS } from "./render/origin.ts";
import { scoreItems } from "./rank/relevance.ts";
import { clipQuery } from "./query-text.ts";
import type { RetrievalContext } from "./retrieval-context.ts";
import { asServed, checkRoot, outOfDateLine, withStatusNote, verificationField, verifyItems } from "./verify/verify.ts";
import { ageDays, buildQueryModel, informativeQuery } from "./rank/scoring.ts";

export async function searchMemory(ctx: RetrievalContext, request: SearchQuery): Promise<SearchResponse> {
  const clipped = clipQuery(request.query);
  const q = { ...request, query: clipped.text };
  const budget = q.context_budget_tokens ?? ctx.budgets.search;
  const excluded = new Set(q.exclude_memory_ids);
  const model = buildQueryModel(ctx.db, q.query);
  // The ranker gets the informative words (function words would match nearly every item); a query
  // made only of such words falls back to the raw text.
  const lexical = lexicalCandidates(
    ctx.db,
    informativeQuery(model) || q.query,
    Math.max(50, (q.top_k + excluded.size) * 4),
  );
  const ids = new Set(lexical.keys());
  let queryVec: Float32Array | undefined;
  if (ctx.embedder) {
    queryVec = await queryVector(ctx.embedder, q.query);
    if (queryVec)
      for (const id of (
        await vectorCandidates(ctx.db, ctx.projectId, ctx.embedder, queryVec, Math.max(20, q.top_k * 4))
      ).keys())
        ids.add(id);
  }
  const items = loadItems(ctx.db, ctx.projectId, ids, q.types);
  const scored = await scoreItems(ctx, items, {
    text: q.query,
    paths: q.scope_paths,
    similarity: "relative",
    lexical,
    model,
    ...(queryVec ? { queryVec } : {}),
  });

  let omittedSeen = 0;
  const top = [];
  for (const s of scored) {
    if (top.length >= q.top_k) break;
    if (excluded.has(s.item.id)) omittedSeen++;
    else top.push(s);
  }
  // Checked against today's code: an explicit search still shows a stale item, said to be out of date.
  const checks = verifyItems(
    checkRoot(ctx),
    ctx.db,
    top.map((s) => s.item),
    ctx.nowMs,
  );
  for (const [i, s] of top.entries()) {
    const v = checks.get(s.item.id);
    if (v) top[i] = { ...s, item: asServed(s.item, v), reason: withStatusNote(s.reason, v) };
  }
  const blocks: Block[] = top.map((s) => {
    const v = checks.get(s.item.id);
    return {
      id: s.item.id,
      group: groupOf(s.item),
      text: v?.status === "stale" ? outOfDateLine(s.item.content, v) : memoryLine(s.item, ctx.nowMs),
    };
  });
  const packed = packBlocks({
    header: `## Memory matching "${echoedQuery(q.query)}"${clipped.note ? `\n${clipped.note}` : ""}`,
    groups: SERVED_HEADINGS,
    blocks,
    budget,
    counter: ctx.counter,
    omittedSeen,
    emptyText:
      omittedSeen > 0 ? "Every match was already shown earlier in this session." : "No memory matches this query.",
  });
  const byId = new Map(top.map((s) => [s.item.id, s]));
  const shown = packed.shown.map((b) => byId.get(b.id)!);
  return SearchResponse.parse({
    type: "search_results",
    project_id: ctx.projectId,
    query: q.query,
    generated_at: nowIso(ctx.nowMs),
    token_estimate: packed.tokens,
    results: shown.map((s) => ({
      memory_id: s.item.id,
      type: s.item.type,
      key: s.item.key,
      content: s.item.content,
      tags: s.item.tags,
      importance: s.item.importance,
      recency_days: Math.round(ageDays(s.item.updated_at, ctx.nowMs)),
      score: Math.round(s.score * 1000) / 1000,
      reason: s.reason,
      source: {
        episode_ids: [
          ...new Set([...(s.item.source_episode_id ? [s.item.source_episode_id] : []), ...s.item.evidence_episode_ids]),
        ],
        file_paths: s.item.file_paths,
      },
      ...verificationField(checks.get(s.item.id)),
    })),
    markdown: packed.markdown,
    memory_ids: shown.map((s) => s.item.id),
    omitted_seen: omittedSeen,
  });
}

/** The query as the answer's heading repeats it: redacted (an agent may paste a key into it), then shortened. */
function echoedQuery(query: string): string {
  const q = redactText(query);
  return q.length > 80 ? `${q.slice(0, 77)}...` : q;
}
