/**
 * Synthetic memory stores for the retrieval latency benchmark (bench/retrieval.ts), deterministic per
 * seed. Two corpora:
 *
 * - `realistic`: coding memories written like the extractor's (and test/fixtures/retrieval/
 *   labelled.json's): pitfalls with a symptom and a fix, project facts naming files and libraries,
 *   recipes with commands, style preferences. Modules, libraries and nouns are drawn with Zipf
 *   weights, so a few (auth, postgres, token…) are in thousands of items and most are rare — as in
 *   a real store. Queries are task descriptions of varied length (a short "Fix the flaky … test" to
 *   two sentences naming a file), half with active files, and one in eight is about something the
 *   store has never seen (abstention path).
 * - `uniform`: the stress case: 20 modules × 20 libraries × 20 nouns drawn uniformly and four
 *   short templates, so every query word sits in ~5 % of the items (no rare word to anchor on).
 */
import { MEMORY_TYPES, type MemoryType } from "../src/shared/api.ts";
import type { ItemSpec } from "../test/engine/retrieve/helpers.ts";

export type CorpusName = "realistic" | "uniform";
export const CORPORA: readonly CorpusName[] = ["realistic", "uniform"];

export interface SynthQuery {
  task: string;
  files: string[];
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** A sampler with weight 1/(rank+1)^s over the list's order. */
function zipf<T>(xs: readonly T[], s = 1): (r: () => number) => T {
  const cum: number[] = [];
  let total = 0;
  for (let i = 0; i < xs.length; i++) cum.push((total += 1 / (i + 1) ** s));
  return (r) => {
    const x = r() * total;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return xs[lo]!;
  };
}

const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
const camel = (...parts: string[]) =>
  parts
    .map((p, i) => (i === 0 ? p : cap(p)))
    .join("")
    .replace(/[^A-Za-z0-9]/g, "");
const slug = (w: string) => w.replace(/\s+/g, "-");

// ---- realistic ------------------------------------------------------------------------------------

const MODULES = (
  "auth billing inventory users orders payments search reports email cache queue sessions admin catalog shipping " +
  "invoices webhooks notifications analytics uploads checkout cart pricing tax refunds subscriptions teams " +
  "permissions audit export import scheduler jobs metrics logging config onboarding profile settings comments feed " +
  "chat media thumbnails geo i18n flags ratelimit gateway sync backup seed docs cli sdk ledger coupons"
).split(" ");
const LIBS = (
  "postgres redis drizzle vitest hono react zod docker jwt stripe bullmq s3 kafka nginx prisma graphql oauth " +
  "websocket pino sentry playwright vite eslint biome pnpm node typescript tailwind nextjs express fastify knex " +
  "mongodb elasticsearch rabbitmq terraform kubernetes opentelemetry grafana sqlite turborepo storybook jest msw " +
  "axios dayjs lodash"
).split(" ");
const NOUNS = [
  "token",
  "handler",
  "migration",
  "schema",
  "endpoint",
  "query",
  "index",
  "timeout",
  "retry",
  "cursor",
  "batch",
  "webhook",
  "payload",
  "header",
  "cookie",
  "transaction",
  "lock",
  "worker",
  "job",
  "template",
  "fixture",
  "snapshot",
  "selector",
  "reducer",
  "hook",
  "middleware",
  "validator",
  "serializer",
  "client",
  "connection pool",
  "cache key",
  "feature flag",
  "env var",
  "secret",
  "bucket",
  "topic",
  "consumer",
  "producer",
  "cron expression",
  "rate limiter",
  "pagination",
  "sort order",
  "timezone",
  "locale",
  "currency",
  "decimal",
  "uuid",
  "slug",
  "enum",
  "foreign key",
  "constraint",
  "trigger",
  "view",
  "dashboard",
  "chart",
  "form",
  "modal",
  "route",
  "loader",
  "session",
];
const SYMPTOMS = [
  "fails with ECONNREFUSED",
  "hangs until the test times out",
  "leaks memory",
  "deadlocks on TRUNCATE",
  "times out after 30 s",
  "returns null",
  "double-counts",
  "drops messages",
  "throws 'Body already used'",
  "returns 401 for valid users",
  "returns 500 on an empty body",
  "loses the timezone",
  "rounds prices wrong",
  "is flaky in CI",
  "breaks after a restart",
  "writes duplicate rows",
  "skips the last page",
  "logs secrets",
  "ignores the locale",
  "retries forever",
];
const SHORT_SYMPTOMS = [
  "fail",
  "hang",
  "time out",
  "return null",
  "double-count",
  "drop messages",
  "return 401",
  "lose the timezone",
  "break after a restart",
  "write duplicate rows",
];
const TRIGGERS = [
  "tests run in parallel",
  "the pool is exhausted",
  "two workers pick the same job",
  "the clock is faked",
  "the payload is empty",
  "the connection drops",
  "the cache is cold",
  "a migration is half applied",
  "the token expires mid-request",
  "the container restarts",
];
const FIXES = [
  "wrap it in a transaction",
  "add an index on the foreign key",
  "raise the pool size to 20",
  "validate the payload with zod first",
  "use vi.setSystemTime instead of fake timers",
  "await the promise before returning",
  "invalidate the cache after writes",
  "pass the request id through",
  "run the tests with --pool=forks",
  "start the container first with docker compose up -d",
  "convert with Number() before adding",
  "store timestamps as timestamptz",
  "read the body once and reuse it",
  "set a 5 s statement timeout",
  "use an idempotency key",
  "release the lock in finally",
];
const PURPOSES = [
  "background jobs",
  "the public API",
  "admin screens",
  "nightly reports",
  "outgoing email",
  "the mobile app",
  "CSV exports",
  "search indexing",
];

const pickModule = zipf(MODULES);
const pickLib = zipf(LIBS);
const pickNoun = zipf(NOUNS);

function realisticItem(r: () => number, i: number): ItemSpec {
  const type = MEMORY_TYPES[i % MEMORY_TYPES.length] as MemoryType;
  const mod = pickModule(r);
  const lib = pickLib(r);
  const lib2 = pickLib(r);
  const noun = pickNoun(r);
  const n = Math.floor(r() * 400);
  const file = `src/${mod}/${slug(noun)}${r() < 0.3 ? `-${n % 20}` : ""}.ts`;
  const test = `tests/${mod}/${slug(noun)}.test.ts`;
  const ident = camel(r() < 0.5 ? "get" : "handle", mod, ...noun.split(" "));
  const variants: Record<MemoryType, string[]> = {
    pitfall: [
      `The ${mod} ${noun} ${pick(r, SYMPTOMS)} when ${pick(r, TRIGGERS)}; ${pick(r, FIXES)}.`,
      `Tests for the ${mod} ${noun} are flaky under ${lib}: ${pick(r, FIXES)}.`,
      `${cap(lib)} ${pick(r, SYMPTOMS)} in ${ident} (${file}) when ${pick(r, TRIGGERS)}; ${pick(r, FIXES)}.`,
      `Running \`pnpm test ${mod}\` ${pick(r, SYMPTOMS)} unless ${lib} is running; ${pick(r, FIXES)}.`,
    ],
    project_fact: [
      `The ${mod} module keeps its ${noun} in ${file} and talks to ${lib} through ${ident}.`,
      `Module \`src/${mod}/\` (TypeScript): ${pick(r, PURPOSES)} on ${lib} with ${lib2}.`,
      `${cap(mod)} endpoints live in src/routes/${mod}.ts: GET list, GET by id, POST create; the ${noun} is validated with zod.`,
      `${cap(mod)} ${noun} settings are read from environment variables in src/config.ts (${mod.toUpperCase()}_${slug(noun).toUpperCase().replace(/-/g, "_")}).`,
    ],
    recipe: [
      `To rebuild the ${mod} ${noun}: run \`pnpm ${mod}:${slug(noun)}\`, then check ${ident} in ${file}.`,
      `To seed local ${mod} data: \`docker compose up -d ${lib}\`, then \`pnpm db:seed --only ${mod}\`.`,
      `Release ${mod}: bump the version, run \`pnpm build && pnpm test ${mod}\`, tag it and push the tag.`,
      `Debug the ${mod} ${noun} with \`DEBUG=${mod}:* pnpm dev\` and watch the ${lib} logs.`,
    ],
    user_style: [
      `Prefers ${lib} for ${mod} ${noun} code and names helpers like ${ident}.`,
      `Writes ${mod} tests with ${lib}, one behaviour per test, in ${test}.`,
      `Uses named exports and kebab-case file names in src/${mod}; no default exports.`,
      `Keeps ${noun} logic out of route handlers: a service in src/${mod}/ that the route calls.`,
    ],
  };
  return {
    type,
    key: `${mod}_${slug(noun).replace(/-/g, "_")}_${i}`,
    content: pick(r, variants[type]),
    tags: [mod, lib, noun],
    importance: Math.round(r() * 100) / 100,
    file_paths: r() < 0.25 ? [file, test] : [file],
    age_days: Math.floor(r() * 180),
  };
}

const UNRELATED = [
  "Update the README badges and the licence year",
  "Write release notes for version 2.3",
  "Translate the marketing page into German",
  "Plan the agenda for the sprint retrospective",
  "Rename the GitHub organisation in the funding file",
  "Draft a blog post about our hiring process",
];

function realisticQuery(r: () => number): SynthQuery {
  if (r() < 0.125) return { task: pick(r, UNRELATED), files: [] };
  const mod = pickModule(r);
  const noun = pickNoun(r);
  const lib = pickLib(r);
  const file = `src/${mod}/${slug(noun)}.ts`;
  const tasks = [
    `Fix the flaky ${mod} ${noun} test`,
    `Add a ${noun} to the ${mod} endpoint`,
    `Why does the ${mod} ${noun} ${pick(r, SHORT_SYMPTOMS)} in production?`,
    `Refactor ${mod} ${noun} handling to use ${lib}`,
    `Write a migration that adds a ${noun} column to the ${mod} table`,
    `The ${mod} ${noun} started to ${pick(r, SHORT_SYMPTOMS)} after we upgraded ${lib}. Find the cause and add a regression test.`,
    `Move the ${noun} logic out of ${file} into a service and keep the ${lib} integration working; the ${mod} tests must stay green.`,
    `${cap(camel("get", mod, ...noun.split(" ")))} ${pick(r, SHORT_SYMPTOMS)}s when ${pick(r, TRIGGERS)}`,
  ];
  return { task: pick(r, tasks), files: r() < 0.5 ? [r() < 0.7 ? file : `src/${mod}/`] : [] };
}

// ---- uniform (stress) -------------------------------------------------------------------------------

const U_MODULES =
  "auth inventory billing users orders payments search reports email cache queue sessions admin catalog shipping invoices webhooks notifications analytics uploads".split(
    " ",
  );
const U_TECH =
  "postgres redis kafka hono react drizzle vitest docker nginx graphql zod prisma bullmq s3 stripe jwt oauth websocket cron pino".split(
    " ",
  );
const U_NOUNS =
  "token handler migration schema endpoint query index timeout retry cursor batch webhook payload header cookie transaction lock worker job template".split(
    " ",
  );
const U_VERBS = "fails hangs leaks deadlocks times-out returns-null double-counts drops throws retries".split(" ");
const U_FIXES = [
  "wrap it in a transaction",
  "add an index on the foreign key",
  "raise the pool size to 20",
  "validate the payload with zod first",
  "use vi.setSystemTime in tests",
  "await the promise before returning",
  "invalidate the cache after writes",
  "pass the request id through",
];

function uniformItem(r: () => number, i: number): ItemSpec {
  const mod = pick(r, U_MODULES);
  const tech = pick(r, U_TECH);
  const noun = pick(r, U_NOUNS);
  const type = MEMORY_TYPES[i % MEMORY_TYPES.length] as MemoryType;
  const file = `src/${mod}/${noun}-${Math.floor(r() * 40)}.ts`;
  const ident = `${mod}${cap(noun)}${Math.floor(r() * 500)}`;
  const content =
    type === "pitfall"
      ? `The ${mod} ${noun} ${pick(r, U_VERBS)} under ${tech} when ${ident} runs concurrently; ${pick(r, U_FIXES)}.`
      : type === "recipe"
        ? `To rebuild the ${mod} ${noun}: run \`pnpm ${mod}:${noun}\`, then check ${ident} in ${file}.`
        : type === "user_style"
          ? `Prefers ${tech} for ${mod} ${noun} code and names helpers like ${ident}.`
          : `The ${mod} module keeps its ${noun} in ${file} and talks to ${tech} through ${ident}.`;
  return {
    type,
    key: `${type}:${mod}:${noun}:${i}`,
    content,
    tags: [mod, tech, noun],
    importance: Math.round(r() * 100) / 100,
    file_paths: [file],
    age_days: Math.floor(r() * 180),
  };
}

function uniformQuery(r: () => number): SynthQuery {
  const mod = pick(r, U_MODULES);
  const noun = pick(r, U_NOUNS);
  const tech = pick(r, U_TECH);
  const tasks = [
    `Fix the ${mod} ${noun} that ${pick(r, U_VERBS)} with ${tech}`,
    `Add a ${noun} to the ${mod} endpoint`,
    `Why does the ${mod} ${noun} ${pick(r, U_VERBS)} in production?`,
    `Refactor ${mod} ${noun} handling to use ${tech}`,
  ];
  return { task: pick(r, tasks), files: r() < 0.5 ? [`src/${mod}/${noun}-${Math.floor(r() * 40)}.ts`] : [] };
}

export function synthItem(corpus: CorpusName, r: () => number, i: number): ItemSpec {
  return corpus === "uniform" ? uniformItem(r, i) : realisticItem(r, i);
}

export function synthQuery(corpus: CorpusName, r: () => number): SynthQuery {
  return corpus === "uniform" ? uniformQuery(r) : realisticQuery(r);
}
