/**
 * Unknown-flag check for the CLI: citty ignores flags it does not know, so `sqrl search x --top-k 1`
 * would silently run with the default. Every `-x`/`--name` on the command line must belong to the
 * command it is given to (or one of its parents); otherwise the run is a usage error that names the
 * closest real flag.
 */
import type { ArgsDef, CommandDef } from "citty";

/** Flags every command accepts (handled by runMain itself). */
const GLOBAL_FLAGS = ["--help", "-h", "--debug"];

interface FlagSet {
  /** Every accepted spelling, with its dashes: --top, --no-backfill, -y. */
  names: Set<string>;
  /** Spellings that take the next word as their value (string flags without `=`). */
  takesValue: Set<string>;
}

function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
}

/** Every spelling of the flags the commands in `chain` declare. */
export function flagSet(chain: ArgsDef[]): FlagSet {
  const names = new Set(GLOBAL_FLAGS);
  const takesValue = new Set<string>();
  for (const args of chain) {
    for (const [key, def] of Object.entries(args)) {
      if (def.type === "positional") continue;
      const alias = (def as { alias?: string | string[] }).alias;
      const aliases = Array.isArray(alias) ? alias : alias ? [alias] : [];
      const spellings = [`--${key}`, `--${kebab(key)}`, ...aliases.map((a) => (a.length === 1 ? `-${a}` : `--${a}`))];
      for (const s of spellings) {
        names.add(s);
        if (def.type === "string" || def.type === "enum") takesValue.add(s);
        else if (def.type === "boolean" && s.startsWith("--")) names.add(`--no-${s.slice(2)}`);
      }
    }
  }
  return { names, takesValue };
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The accepted flag closest to `flag`, if any is close enough to be a plausible typo. */
export function closestFlag(flag: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  const bare = flag.replace(/^-+/, "");
  for (const name of names) {
    if (!name.startsWith("--") || name === "--debug" || name === "--help") continue;
    const candidate = name.slice(2);
    // A prefix match (--top-k → --top, --bud → --budget) counts as close as a one-letter typo.
    const score = bare.startsWith(candidate) || candidate.startsWith(bare) ? 1 : distance(bare, candidate);
    if (score < bestScore) {
      best = name;
      bestScore = score;
    }
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(bare.length / 3)) ? best : undefined;
}

/** The first flag in `rawArgs` that none of the commands accepts, with a suggestion, or undefined. */
export function findUnknownFlag(
  rawArgs: string[],
  chain: ArgsDef[],
): { flag: string; suggestion?: string } | undefined {
  const { names, takesValue } = flagSet(chain);
  for (let i = 0; i < rawArgs.length; i++) {
    const word = rawArgs[i]!;
    if (word === "--") break;
    if (!word.startsWith("-") || word === "-" || /^-\d/.test(word)) continue;
    const flag = word.includes("=") ? word.slice(0, word.indexOf("=")) : word;
    // Short flags bundle (`-fn5`: -f, then -n with the value 5), as citty's parser reads them.
    if (!flag.startsWith("--") && flag.length > 2) {
      const bad = shortBundleError(flag, names, takesValue);
      if (bad) return bad;
      continue;
    }
    if (!names.has(flag)) return { flag, suggestion: closestFlag(flag, names) };
    if (takesValue.has(flag) && !word.includes("=")) i++;
  }
  return undefined;
}

/** The first unknown letter of a bundle of short flags; a letter that takes a value ends the bundle. */
function shortBundleError(
  bundle: string,
  names: Set<string>,
  takesValue: Set<string>,
): { flag: string; suggestion?: string } | undefined {
  for (const letter of bundle.slice(1)) {
    const flag = `-${letter}`;
    if (!names.has(flag)) return { flag: bundle, suggestion: closestFlag(bundle, names) };
    if (takesValue.has(flag)) return undefined;
  }
  return undefined;
}

/** The args definitions of `cmd` (resolved). */
export async function argsOf(cmd: CommandDef<any>): Promise<ArgsDef> {
  const args = cmd.args;
  return ((typeof args === "function" ? await args() : await args) ?? {}) as ArgsDef;
}
