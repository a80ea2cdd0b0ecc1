/**
 * The CLI runner: citty commands under sqrl's exit-code contract (0 ok, 1 failure, 2 bad usage) and one-line
 * errors.
 */
import { renderUsage, runCommand, type CommandDef } from "citty";
import { describeError, isSqrlError } from "../shared/errors.ts";
import { log, setDebug } from "../shared/log.ts";
import { argsOf, findUnknownFlag } from "./flags.ts";
import { exitQuietlyOnClosedStdout } from "./stdout.ts";

async function resolveValue<T>(v: T | (() => T | Promise<T>) | Promise<T>): Promise<T> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

/** Follow positional words through nested subCommands to the command `--help` is about. */
async function resolveForHelp(
  root: CommandDef<any>,
  rawArgs: string[],
): Promise<[CommandDef<any>, CommandDef<any> | undefined, string[], CommandDef<any>[]]> {
  let cmd = root;
  let parent: CommandDef<any> | undefined;
  const path: string[] = [];
  const chain = [root];
  for (const word of rawArgs) {
    if (word.startsWith("-")) continue;
    const subs = (await resolveValue(cmd.subCommands)) as Record<string, unknown> | undefined;
    const next = subs?.[word];
    if (!next) break;
    parent = cmd;
    path.push(word);
    cmd = (await resolveValue(next as CommandDef<any>)) as CommandDef<any>;
    chain.push(cmd);
  }
  return [cmd, parent, path, chain];
}

/** Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org). */
function wantsColour(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== "dumb";
}

/** `--help` text of `cmd`, titled with its full command line (`sqrl config set`). */
async function helpText(cmd: CommandDef<any>, path: string[], version: string): Promise<string> {
  const parentName = ["sqrl", ...path.slice(0, -1)].join(" ");
  const parent = path.length === 0 ? undefined : ({ meta: { name: parentName, version } } as CommandDef<any>);
  const text = longAliases(cmd, await renderUsage(cmd, parent));
  return wantsColour() ? text : stripAnsi(text);
}

/**
 * citty shows every alias with one dash (`-top`), but a word-long alias is spelt `--top` on the command
 * line (one dash is for one letter, see flags.ts): show it as it is typed.
 */
function longAliases(cmd: CommandDef<any>, text: string): string {
  const args = (typeof cmd.args === "object" ? cmd.args : {}) as Record<string, { alias?: string | string[] }>;
  let out = text;
  for (const def of Object.values(args)) {
    const aliases = Array.isArray(def.alias) ? def.alias : def.alias ? [def.alias] : [];
    for (const a of aliases.filter((x) => x.length > 1))
      out = out.replace(
        // after a space, a comma or a colour code (citty colours flags even when piped)
        new RegExp(`(?<=^|[\\s,]|\\u001b\\[[0-9;]*m)-${a.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`, "gm"),
        `--${a}`,
      );
  }
  return out;
}

/**
 * Run the CLI with sqrl's exit-code contract: 0 ok, 1 failure, 2 bad usage. Errors print as one
 * line that says what to do; `--debug` adds the stack.
 */
export async function runMain(root: CommandDef<any>, version: string, argv = process.argv.slice(2)): Promise<void> {
  const debug = argv.includes("--debug");
  if (debug) setDebug(true);
  const rawArgs = argv.filter((a) => a !== "--debug");
  if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
    process.stdout.write(`${version}\n`);
    return;
  }
  exitQuietlyOnClosedStdout();
  const helpAt = rawArgs.findIndex((a) => a === "--help" || a === "-h");
  const endOfFlags = rawArgs.indexOf("--");
  const [cmd, , path, chain] = await resolveForHelp(root, rawArgs);
  if (helpAt >= 0 && (endOfFlags < 0 || helpAt < endOfFlags)) {
    process.stdout.write(`${await helpText(cmd, path, version)}\n\n`);
    return;
  }
  const unknown = findUnknownFlag(rawArgs, await Promise.all(chain.map(argsOf)));
  if (unknown) {
    const where = ["sqrl", ...path].join(" ");
    const hint = unknown.suggestion ? ` Did you mean ${unknown.suggestion}?` : "";
    process.stderr.write(
      `sqrl: unknown option ${unknown.flag} for \`${where}\`.${hint} Run \`${where} --help\` for usage.\n`,
    );
    process.exitCode = 2;
    return;
  }
  try {
    await runCommand(root, { rawArgs });
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    if (e?.name === "CLIError") {
      const [, , path] = await resolveForHelp(root, rawArgs);
      const where = ["sqrl", ...path].join(" ");
      process.stderr.write(
        `sqrl: ${stripAnsi(e.message ?? "bad usage").replace(/\.$/, "")}. Run \`${where} --help\` for usage.\n`,
      );
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`sqrl: ${describeError(err)}\n`);
    if (debug && err instanceof Error && err.stack) log.debug(err.stack);
    process.exitCode = isSqrlError(err) ? err.exitCode : 1;
  }
}

function stripAnsi(s: string): string {
  // biome-ignore lint: ANSI escape
  return s.replace(/\u001b\[[0-9;]*m/g, "");
}
