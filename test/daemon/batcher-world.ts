/**
 * The world the batcher tests run in: a private SQRL_HOME under a temp dir (restored after each test),
 * and the engine and batcher they start, stopped after each test.
 */
import { afterEach, beforeEach } from "bun:test";
import { join } from "node:path";
import type { Batcher } from "../../src/daemon/batcher.ts";
import type { EngineServer } from "../../src/engine/server.ts";
import { tempDir } from "../helpers/sqrl.ts";

export interface BatcherWorld {
  dir: ReturnType<typeof tempDir>;
  engine?: EngineServer;
  batcher?: Batcher;
}

/** Register the set-up and tear-down; the returned object holds this test's dir, engine and batcher. */
export function batcherWorld(): BatcherWorld {
  const w = {} as BatcherWorld;
  let savedHome: string | undefined;
  beforeEach(() => {
    w.dir = tempDir();
    w.engine = undefined;
    w.batcher = undefined;
    savedHome = process.env.SQRL_HOME;
    process.env.SQRL_HOME = join(w.dir.path, "sqrl");
  });
  afterEach(async () => {
    await w.batcher?.stop();
    await w.engine?.stop();
    if (savedHome === undefined) delete process.env.SQRL_HOME;
    else process.env.SQRL_HOME = savedHome;
    w.dir.cleanup();
  });
  return w;
}
