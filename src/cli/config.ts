/**
 * `sqrl config get|set|unset|list|path`: read and change ~/.sqrl/config.toml, validated against the config
 * keys.
 */
import { defineCommand } from "citty";
import { listConfig, loadConfig, requireConfigKey, setConfigValue, unsetConfigValue } from "../shared/config.ts";
import { homePaths } from "../shared/paths.ts";

const json = { type: "boolean", description: "Print as JSON" } as const;

function print(value: unknown, asJson: boolean | undefined): void {
  process.stdout.write(
    asJson || typeof value === "object" ? `${JSON.stringify(value, null, 2)}\n` : `${String(value)}\n`,
  );
}

const get = defineCommand({
  meta: { name: "get", description: "Print the effective value of a key" },
  args: { key: { type: "positional", required: true, description: "Dotted key, e.g. llm.provider" }, json },
  run({ args }) {
    const key = requireConfigKey(args.key);
    print(loadConfig()[key], args.json);
  },
});

const set = defineCommand({
  meta: { name: "set", description: "Set a key in config.toml (validated)" },
  args: {
    key: { type: "positional", required: true, description: "Dotted key, e.g. llm.provider" },
    value: { type: "positional", required: true, description: "New value" },
  },
  run({ args }) {
    const value = setConfigValue(args.key, args.value);
    process.stdout.write(`${args.key} = ${JSON.stringify(value)}\n`);
  },
});

const unset = defineCommand({
  meta: { name: "unset", description: "Remove a key from config.toml (its default applies again)" },
  args: { key: { type: "positional", required: true, description: "Dotted key" } },
  run({ args }) {
    unsetConfigValue(args.key);
    process.stdout.write(`${args.key} reset to its default\n`);
  },
});

const list = defineCommand({
  meta: { name: "list", description: "Every key with its value, where it comes from, and what it does" },
  args: { json },
  run({ args }) {
    const entries = listConfig();
    if (args.json) return print(entries, true);
    const width = Math.max(...entries.map((e) => e.key.length));
    const lines = entries.map(
      (e) =>
        `${e.key.padEnd(width)}  ${JSON.stringify(e.value)}${e.source === "default" ? "  (default)" : ""}\n${" ".repeat(width + 2)}# ${e.description}`,
    );
    process.stdout.write(`${lines.join("\n")}\n`);
  },
});

const path = defineCommand({
  meta: { name: "path", description: "Print the path of config.toml" },
  run() {
    process.stdout.write(`${homePaths.config()}\n`);
  },
});

export default defineCommand({
  meta: { name: "config", description: "Read and change ~/.sqrl/config.toml" },
  subCommands: { get, set, unset, list, path },
});
