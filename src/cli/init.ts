/**
 * `sqrl init [path]`: set up sqrl for a repository (project files, config, optionally hosts and the daemon).
 */
import { defineCommand } from "citty";
import { SqrlError } from "../shared/errors.ts";
import { checkoutRoot } from "../shared/git.ts";
import { addCtxToGitignore, initProject, resolveProjectDir } from "./init-project.ts";
import { confirm } from "./confirm.ts";
import { offerLlm, parseLlmChoice } from "./init-llm.ts";

export default defineCommand({
  meta: { name: "init", description: "Set up sqrl for a project: create .ctx/, register it, bootstrap ~/.sqrl" },
  args: {
    path: {
      type: "positional",
      required: false,
      default: ".",
      description: "Project folder (default: current directory)",
    },
    yes: { type: "boolean", alias: "y", description: "Answer yes to every question (no prompts)" },
    "trust-db": {
      type: "boolean",
      description:
        "Keep a .ctx/data.db this machine did not make (by default one that git tracks or that was copied here is moved aside, unserved)",
    },
    json: { type: "boolean", description: "Print the result as JSON" },
    hosts: {
      type: "string",
      description:
        "Register sqrl with MCP hosts: claude,codex,gemini,cursor,qwen,opencode,copilot (or all); claude and qwen also offer the SessionStart hook",
    },
    git: {
      type: "boolean",
      default: true,
      description:
        "Require a git repository (sqrl keys a project on it and reads its commits); --no-git sets up a plain folder",
    },
    llm: {
      type: "string",
      description:
        "Distil with an LLM: auto (a signed-in Claude Code, else Codex, on your plan; the default), claude_code, codex, or none (stay offline)",
    },
    backfill: {
      type: "boolean",
      default: true,
      description: "Offer to import the project's existing transcripts and git history (--no-backfill skips it)",
    },
  },
  async run({ args }) {
    const llmChoice = parseLlmChoice(args.llm);
    if (args.git !== false) {
      const dir = resolveProjectDir(args.path);
      if (!checkoutRoot(dir))
        throw new SqrlError(
          "not_a_git_repo",
          `${dir} is not in a git repository, so sqrl would have no commits to read and no repository to key the project on. Run \`git init\` there first, or pass --no-git to set up the plain folder anyway.`,
        );
    }
    const res = initProject(args.path, { trustDb: args["trust-db"] === true });
    const out: string[] = [];
    if (res.quarantined)
      out.push(
        `Moved ${res.root}/.ctx/data.db aside to ${res.quarantined} (${res.quarantineReason}): memory this machine did not capture is never served.`,
        "  Teammates' memory arrives through `sqrl sync` (.ctx/shared/). To trust that file anyway: `sqrl daemon stop`, move it back to .ctx/data.db, then `sqrl init --trust-db`.",
      );
    out.push(`${res.createdCtx ? "Created" : "Found"} ${res.root}/.ctx (data.db, views/)`);
    if (res.dbTrackedByGit)
      out.push(
        "git tracks .ctx/data.db: it is this machine's memory and would leave with every push. Run `git rm --cached .ctx/data.db` and keep .ctx/* in .gitignore.",
      );
    out.push(res.registered ? `Registered ${res.root} in projects.json` : `${res.root} was already registered`);
    let gitignore: "added" | "present" | "skipped" | "not_git" = "not_git";
    if (res.isGitRepo) {
      if (res.gitignoreHasCtx) gitignore = "present";
      else if (
        await confirm(
          "Add .ctx/* to .gitignore? (.ctx/data.db is this machine's memory and stays out of git; .ctx/shared/ is team memory and stays in)",
          { yes: args.yes === true },
        )
      ) {
        addCtxToGitignore(res.root);
        gitignore = "added";
        out.push("Added .ctx/* to .gitignore (.ctx/shared/ stays in git)");
      } else {
        gitignore = "skipped";
        out.push(
          "Left .gitignore alone: .ctx/data.db is this machine's memory and belongs in .gitignore (add `.ctx/*`, or pass --yes)",
        );
      }
    }
    if (args.hosts)
      out.push(...(await (await import("./hosts.ts")).setupHostsForInit(res.root, args.hosts, args.yes === true)));
    const llm = await offerLlm(llmChoice, { yes: args.yes === true });
    out.push(llm.line);
    const backfill =
      args.backfill === false
        ? undefined
        : await (await import("./ingest.ts")).offerBackfill(res.root, { yes: args.yes === true });
    if (backfill) out.push(backfill.line);
    const gitErrors = backfill?.summary.git_errors ?? [];
    for (const g of gitErrors)
      process.stderr.write(
        `sqrl: the git history of ${g.project_id} could not be read (${g.error}); its commits were not imported. Fix the repository, then run \`sqrl ingest --backfill --source git\`.\n`,
      );
    if (gitErrors.length > 0) process.exitCode = 1;
    if (args.json)
      process.stdout.write(
        `${JSON.stringify({ ...res, gitignore, llm: llm.provider, backfill: backfill?.summary ?? null }, null, 2)}\n`,
      );
    else process.stdout.write(`${out.join("\n")}\n`);
  },
});
