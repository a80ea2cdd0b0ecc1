/**
 * A transcript truncated right after its last append (issue 30 item 8): the response the normalizer
 * was still holding back (it may grow) when the file shrank is stored, not dropped with the
 * normalizer. Live capture, five runs, as in the attack run.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CaptureService } from "../../../src/daemon/capture-service.ts";
import { projectPaths } from "../../../src/shared/paths.ts";
import { claudeLine } from "../../helpers/faults.ts";
import { makeCaptureHome, readEvents, waitFor, type CaptureHome } from "./helpers.ts";

let home: CaptureHome;
let service: CaptureService | null = null;
beforeEach(() => {
  home = makeCaptureHome("[watch]\ngit = false\n");
});
afterEach(async () => {
  await service?.stop();
  service = null;
  home.restore();
});

function assistantLine(cwd: string, session: string, i: number): string {
  return `${JSON.stringify({
    type: "assistant",
    uuid: `a-${i}`,
    sessionId: session,
    timestamp: new Date(Date.UTC(2026, 2, 1, 11, 0, i)).toISOString(),
    cwd,
    message: { id: `msg_${i}`, role: "assistant", content: [{ type: "text", text: `answer number ${i}` }] },
  })}\n`;
}

test("a response held back when the file is truncated 0.2 s after its append is kept (5 of 5 runs)", async () => {
  const dir = join(home.claudeDir, "projects", "-repo");
  mkdirSync(dir, { recursive: true });
  service = new CaptureService({ sweepIntervalMs: 100 });
  await service.start();
  const answers = () =>
    existsSync(projectPaths.db(home.repo))
      ? readEvents(home.repo)
          .filter((e) => e.event_type === "assistant_response")
          .map((e) => e.content.text as string)
      : [];
  for (let run = 0; run < 5; run++) {
    const session = `7777777${run}-0000-4000-8000-000000000030`;
    const path = join(dir, `${session}.jsonl`);
    writeFileSync(path, claudeLine(home.repo, session, run));
    appendFileSync(path, assistantLine(home.repo, session, run));
    await Bun.sleep(200); // read, still held back (the idle flush comes at 0.5 s)
    truncateSync(path, 0);
    await waitFor(() => answers().some((t) => t.includes(`answer number ${run}`)), 3000, `run ${run}'s response`);
  }
  expect(answers()).toHaveLength(5);
});
