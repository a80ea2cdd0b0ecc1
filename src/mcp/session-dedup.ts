/**
 * Per-session de-duplication: within one `sqrl mcp` process a memory already delivered is not
 * delivered again. The ids seen so far go to the API as `exclude_memory_ids`; the engine leaves
 * those out and reports how many in `omitted_seen`. `include_seen: true` on a call turns it off.
 */
export class SessionDedup {
  private readonly seen = new Set<string>();

  /** Ids to exclude from the next answer (none when the caller asked to include seen ones). */
  excludeFor(includeSeen: boolean | undefined): string[] {
    return includeSeen === true ? [] : [...this.seen];
  }

  /** Remember the ids an answer delivered. */
  record(ids: readonly string[]): void {
    for (const id of ids) this.seen.add(id);
  }

  has(id: string): boolean {
    return this.seen.has(id);
  }

  get size(): number {
    return this.seen.size;
  }
}
