import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeHome, SQRL_BIN, type DaemonHome } from "./harness.ts";

let home: DaemonHome | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

/** systemd unit → {section: {key: [values]}}; throws on lines outside a section or without `=`. */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  let section: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      out[section] = {};
      continue;
    }
    const eq = line.indexOf("=");
    if (!section || eq <= 0) throw new Error(`bad unit line: ${line}`);
    const key = line.slice(0, eq);
    (out[section]![key] ??= []).push(line.slice(eq + 1));
  }
  return out;
}

/** Minimal well-formedness check of XML: every open tag is closed in order. */
function checkXmlBalanced(xml: string): void {
  const body = xml.replace(/<\?xml[^>]*\?>/, "").replace(/<!DOCTYPE[^>]*>/, "");
  const stack: string[] = [];
  for (const m of body.matchAll(/<(\/?)([A-Za-z]+)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (closing) {
      const open = stack.pop();
      if (open !== name) throw new Error(`</${name}> closes <${open}>`);
    } else stack.push(name!);
  }
  if (stack.length > 0) throw new Error(`unclosed: ${stack.join(", ")}`);
}

function plistValue(xml: string, key: string): string | undefined {
  const m = new RegExp(`<key>${key}</key>\\s*(<(string|integer)>([^<]*)</\\2>|<(true|false)/>)`).exec(xml);
  return m ? (m[3] ?? m[4]) : undefined;
}

describe.skipIf(!existsSync(SQRL_BIN))("sqrl daemon install (compiled binary)", () => {
  test("install --print (linux) gives a systemd user unit that runs `<binary> daemon run` and restarts on failure", () => {
    home = makeHome();
    const res = home.sqrl(["daemon", "install", "--print", "--platform", "linux"]);
    expect(res.code).toBe(0);
    const unit = parseUnit(res.stdout);
    expect(unit.Service!.ExecStart).toEqual([`${resolve(SQRL_BIN)} daemon run`]);
    expect(unit.Service!.Restart).toEqual(["on-failure"]);
    expect(unit.Service!.Type).toEqual(["simple"]);
    expect(unit.Service!.Environment).toContain(`SQRL_HOME=${home.sqrlHome}`);
    expect(unit.Install!.WantedBy).toEqual(["default.target"]);
    expect(unit.Unit!.Description![0]!.length).toBeGreaterThan(0);
    // Nothing was written.
    expect(existsSync(join(home.env.HOME!, ".config", "systemd", "user", "sqrl.service"))).toBe(false);

    const analyze = Bun.which("systemd-analyze");
    if (analyze) {
      const path = join(home.root, "sqrl.service");
      writeFileSync(path, res.stdout);
      const verify = Bun.spawnSync([analyze, "verify", path], {
        env: { ...home.env, SYSTEMD_LOG_LEVEL: "warning" },
        stderr: "pipe",
        stdout: "pipe",
      });
      const messages = `${verify.stdout.toString()}${verify.stderr.toString()}`;
      // Complaints about this unit name the file; other noise (no D-Bus in a container) does not.
      const aboutUnit = messages.split("\n").filter((l) => l.includes("sqrl.service"));
      expect(aboutUnit).toEqual([]);
    }
  });

  test("install --print --platform darwin gives a launchd plist with KeepAlive on failure", () => {
    home = makeHome();
    const res = home.sqrl(["daemon", "install", "--print", "--platform", "darwin"]);
    expect(res.code).toBe(0);
    const xml = res.stdout;
    checkXmlBalanced(xml);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(plistValue(xml, "Label")).toBe("dev.sqrl.daemon");
    const args = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(xml)?.[1] ?? "";
    expect([...args.matchAll(/<string>([^<]*)<\/string>/g)].map((m) => m[1])).toEqual([
      resolve(SQRL_BIN),
      "daemon",
      "run",
    ]);
    expect(plistValue(xml, "RunAtLoad")).toBe("true");
    expect(plistValue(xml, "SuccessfulExit")).toBe("false");
    expect(plistValue(xml, "SQRL_HOME")).toBe(home.sqrlHome);
    const plutil = Bun.which("plutil");
    if (plutil) {
      const path = join(home.root, "sqrl.plist");
      writeFileSync(path, xml);
      expect(Bun.spawnSync([plutil, "-lint", path]).exitCode).toBe(0);
    }
  });

  test("install --no-activate writes the unit under XDG_CONFIG_HOME; uninstall removes it", () => {
    home = makeHome("", {});
    const env = { ...home.env, XDG_CONFIG_HOME: join(home.root, "xdg") };
    const run = (args: string[]) => Bun.spawnSync([SQRL_BIN, ...args], { env, stdout: "pipe", stderr: "pipe" });
    const printed = run(["daemon", "install", "--print", "--platform", "linux"]).stdout.toString();
    const installed = run(["daemon", "install", "--no-activate", "--platform", "linux"]);
    expect(installed.exitCode).toBe(0);
    const path = join(home.root, "xdg", "systemd", "user", "sqrl.service");
    expect(installed.stdout.toString()).toContain(`Wrote ${path}`);
    expect(installed.stdout.toString()).toContain("systemctl --user enable --now sqrl.service");
    expect(readFileSync(path, "utf8")).toBe(printed);

    const removed = run(["daemon", "uninstall", "--no-activate", "--platform", "linux"]);
    expect(removed.exitCode).toBe(0);
    expect(removed.stdout.toString()).toContain(`Removed ${path}`);
    expect(existsSync(path)).toBe(false);
  });

  test("a bad --platform is a usage error (exit 2)", () => {
    home = makeHome();
    const res = home.sqrl(["daemon", "install", "--print", "--platform", "windows"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--platform must be linux or darwin");
  });
});
