/**
 * A closed stdout ends the command quietly: `sqrl search … | head -1` closes the pipe after the first
 * line, and the next write fails with EPIPE. That is the reader saying "enough", not an error, so
 * the process exits 0 without a stack trace (as `cat` and `grep` do).
 */
let installed = false;

function isClosedPipe(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/** Install once per process: stdout/stderr write errors from a closed pipe exit 0. */
export function exitQuietlyOnClosedStdout(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err) => {
      if (isClosedPipe(err)) process.exit(0);
      throw err;
    });
  }
}
