/**
 * The HTTP contract of the engine (`sqrl engine`) and of the daemon, which serves the same read
 * paths by forwarding them to the engine. Shapes follow reference §5 and are binding; the extra
 * fields sqrl adds everywhere are `memory_ids` (what this answer shows, for per-session de-dup)
 * and `omitted_seen` (how many were left out because the caller had already seen them).
 * `ROUTES` at the end is the one route table: the engine server, the daemon's forwarder, the MCP
 * bridge and the CLI client all derive from it.
 */
import { z } from "zod";
import { ERROR_CODES } from "./errors.ts";
import { EvalForgetRequest, EvalForgetResponse, EvalRunRequest, EvalStatus } from "./eval-report.ts";
import { EventDTO } from "./event.ts";

export const MEMORY_TYPES = ["user_style", "project_fact", "pitfall", "recipe"] as const;
export const MemoryType = z.enum(MEMORY_TYPES);
export type MemoryType = z.infer<typeof MemoryType>;

/** A memory checked against today's code when served (issue 15; src/engine/retrieve/verify). */
export const VERIFICATION_STATUSES = ["verified", "moved", "stale", "unverifiable"] as const;
export const Verification = z.object({ status: z.enum(VERIFICATION_STATUSES), reason: z.string() });

export const ViewMode = z.enum(["core", "full"]);
export const VIEW_NAMES = ["user_style", "project_brief", "pitfalls"] as const;
export type ViewName = (typeof VIEW_NAMES)[number];

export const Budget = z.number().int().min(1).max(100_000);

/** Errors of both APIs: `{error, code}` with a matching HTTP status. */
export const ApiError = z.object({ error: z.string(), code: z.enum(ERROR_CODES) });
export type ApiError = z.infer<typeof ApiError>;

const DedupFields = {
  memory_ids: z.array(z.string()),
  omitted_seen: z.number().int().nonnegative(),
};

// ---- process_events ----------------------------------------------------------------------------
export const ProcessEventsRequest = z.object({
  project_id: z.string().min(1),
  user_id: z.string().min(1),
  events: z.array(EventDTO),
});
export type ProcessEventsRequest = z.infer<typeof ProcessEventsRequest>;

export const ProcessEventsResponse = z.object({
  episode_ids: z.array(z.string()),
  memory_item_ids: z.array(z.string()),
});
export type ProcessEventsResponse = z.infer<typeof ProcessEventsResponse>;

// ---- views ---------------------------------------------------------------------------------------
export const ViewQuery = z.object({
  project_id: z.string().min(1),
  user_id: z.string().min(1).optional(),
  mode: ViewMode.default("core"),
  context_budget_tokens: Budget.optional(),
  scope_paths: z.array(z.string()).default([]),
  task_description: z.string().optional(),
  exclude_memory_ids: z.array(z.string()).default([]),
  /** A linked git worktree of the project the caller works in: memories are checked against its files. */
  work_tree: z.string().min(1).optional(),
});
export type ViewQuery = z.infer<typeof ViewQuery>;

export const UserStyleItem = z.object({
  key: z.string(),
  summary: z.string(),
  tags: z.array(z.string()),
  importance: z.number(),
  last_updated_at: z.string(),
  source_memory_ids: z.array(z.string()),
});

export const UserStyleView = z.object({
  type: z.literal("user_style_view"),
  mode: ViewMode,
  project_id: z.string(),
  user_id: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  items: z.array(UserStyleItem),
  markdown: z.string(),
  ...DedupFields,
});
export type UserStyleView = z.infer<typeof UserStyleView>;

export const ProjectModule = z.object({ name: z.string(), paths: z.array(z.string()), summary: z.string() });

export const ProjectBriefView = z.object({
  type: z.literal("project_brief_view"),
  mode: ViewMode,
  project_id: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  modules: z.array(ProjectModule),
  key_facts: z.array(z.string()),
  markdown: z.string(),
  ...DedupFields,
});
export type ProjectBriefView = z.infer<typeof ProjectBriefView>;

export const PitfallItem = z.object({
  key: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  importance: z.number(),
  file_paths: z.array(z.string()),
  verification: Verification.optional(),
});

export const PitfallsView = z.object({
  type: z.literal("pitfalls_view"),
  project_id: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  has_relevant_pitfalls: z.boolean(),
  items: z.array(PitfallItem),
  markdown: z.string(),
  ...DedupFields,
});
export type PitfallsView = z.infer<typeof PitfallsView>;

// ---- task_context --------------------------------------------------------------------------------
export const TaskContextRequest = z.object({
  project_id: z.string().min(1),
  user_id: z.string().min(1).optional(),
  task_description: z.string().min(1),
  active_file_paths: z.array(z.string()).default([]),
  context_budget_tokens: Budget.optional(),
  preferred_memory_types: z.array(MemoryType).optional(),
  exclude_memory_ids: z.array(z.string()).default([]),
  /** A linked git worktree of the project the caller works in: memories are checked against its files. */
  work_tree: z.string().min(1).optional(),
});
export type TaskContextRequest = z.infer<typeof TaskContextRequest>;

export const SelectedMemory = z.object({
  memory_id: z.string(),
  type: MemoryType,
  key: z.string(),
  content: z.string(),
  importance: z.number(),
  reason: z.string(),
  verification: Verification.optional(),
});

export const NO_RELEVANT_MEMORY = "No relevant long-term memory found for this task.";

export const TaskContext = z.object({
  type: z.literal("task_context"),
  project_id: z.string(),
  user_id: z.string(),
  task_description: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  has_relevant_memory: z.boolean(),
  selected_memories: z.array(SelectedMemory),
  markdown: z.string(),
  ...DedupFields,
});
export type TaskContext = z.infer<typeof TaskContext>;

// ---- search_memory -------------------------------------------------------------------------------
export const SearchQuery = z.object({
  project_id: z.string().min(1),
  query: z.string().min(1),
  top_k: z.number().int().min(1).max(100).default(5),
  types: z.array(MemoryType).default([]),
  scope_paths: z.array(z.string()).default([]),
  context_budget_tokens: Budget.optional(),
  exclude_memory_ids: z.array(z.string()).default([]),
  /** A linked git worktree of the project the caller works in: memories are checked against its files. */
  work_tree: z.string().min(1).optional(),
});
export type SearchQuery = z.infer<typeof SearchQuery>;

export const SearchResult = z.object({
  memory_id: z.string(),
  type: MemoryType,
  key: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  importance: z.number(),
  recency_days: z.number(),
  score: z.number(),
  reason: z.string(),
  source: z.object({ episode_ids: z.array(z.string()), file_paths: z.array(z.string()) }),
  verification: Verification.optional(),
});

export const SearchResponse = z.object({
  type: z.literal("search_results"),
  project_id: z.string(),
  query: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  results: z.array(SearchResult),
  markdown: z.string(),
  ...DedupFields,
});
export type SearchResponse = z.infer<typeof SearchResponse>;

// ---- timeline and recall -------------------------------------------------------------------------
export const TimelineQuery = z.object({
  project_id: z.string().min(1),
  limit: z.number().int().min(1).max(1000).default(20),
  since: z.string().optional(),
  context_budget_tokens: Budget.optional(),
});
export type TimelineQuery = z.infer<typeof TimelineQuery>;

export const TimelineEpisode = z.object({
  episode_id: z.string(),
  session_id: z.string().nullable(),
  start_ts: z.string(),
  end_ts: z.string(),
  event_count: z.number().int(),
  summary: z.string(),
  importance: z.number(),
  file_paths: z.array(z.string()),
  outcome: z.string(),
});
export type TimelineEpisode = z.infer<typeof TimelineEpisode>;

export const Timeline = z.object({
  type: z.literal("timeline"),
  project_id: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  episodes: z.array(TimelineEpisode),
  markdown: z.string(),
});
export type Timeline = z.infer<typeof Timeline>;

export const RecallQuery = z.object({
  project_id: z.string().min(1),
  episode_id: z.string().min(1),
  context_budget_tokens: Budget.optional(),
});
export type RecallQuery = z.infer<typeof RecallQuery>;

export const RecalledEvent = z.object({
  event_id: z.string(),
  timestamp: z.string(),
  event_type: z.string(),
  text: z.string(),
  file_paths: z.array(z.string()),
});

export const EpisodeRecall = z.object({
  type: z.literal("episode_recall"),
  project_id: z.string(),
  episode_id: z.string(),
  generated_at: z.string(),
  token_estimate: z.number().int().nonnegative(),
  episode: TimelineEpisode,
  events: z.array(RecalledEvent),
  events_total: z.number().int().nonnegative(),
  markdown: z.string(),
});
export type EpisodeRecall = z.infer<typeof EpisodeRecall>;

// ---- health and status ---------------------------------------------------------------------------
export const Health = z.object({
  ok: z.boolean(),
  pid: z.number().int(),
  version: z.string(),
  uptime_s: z.number(),
  /** The daemon's SQRL_HOME (absolute): a pid or a runtime file may belong to another home's daemon. */
  home: z.string().optional(),
});
export type Health = z.infer<typeof Health>;

export const DaemonStatus = z.object({
  pid: z.number().int(),
  port: z.number().int(),
  version: z.string(),
  uptime_s: z.number(),
  projects: z.array(
    z.object({
      project_id: z.string(),
      events: z.number().int(),
      queue_depth: z.number().int(),
      last_batch_at: z.string().nullable(),
      last_error: z.string().nullable(),
      /** The registered folder is gone (`sqrl forget-project` unregisters it). */
      missing: z.boolean().optional(),
    }),
  ),
  sources: z.array(z.object({ name: z.string(), enabled: z.boolean(), path: z.string(), files: z.number().int() })),
  engine: z.object({
    healthy: z.boolean(),
    pid: z.number().int().nullable(),
    port: z.number().int().nullable(),
    restarts: z.number().int(),
    last_error: z.string().nullable(),
  }),
  last_error: z.string().nullable(),
});
export type DaemonStatus = z.infer<typeof DaemonStatus>;

// ---- memory browsing and curation (sqrl ui) -------------------------------------------------------
export const MEMORY_STATUSES = ["active", "superseded", "forgotten", "all"] as const;
export const MemoryStatus = z.enum(MEMORY_STATUSES);

export const MemoryListQuery = z.object({
  project_id: z.string().min(1),
  types: z.array(MemoryType).default([]),
  scope: z.enum(["project", "user"]).optional(),
  status: MemoryStatus.default("active"),
  /** Search text: ranked by the search_memory ranker for active items, matched as text otherwise. */
  q: z.string().optional(),
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(200).default(50),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuery>;

export const MemoryRow = z.object({
  memory_id: z.string(),
  type: MemoryType,
  scope: z.string(),
  key: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  importance: z.number(),
  confidence: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(["active", "superseded", "forgotten"]),
  pinned: z.boolean(),
  wrong: z.boolean(),
  decision: z.string(),
  extractor: z.string(),
  /** Who said it: "From CLAUDE.md:12", "You said it", "Your edit", "Learned from your sessions", "Imported …". */
  origin: z.string().default(""),
  /** Why it exists: the first evidence event's text, its source episode, how many episodes showed it. */
  evidence: z.object({
    quote: z.string(),
    episode_id: z.string().nullable(),
    episode_count: z.number().int(),
    event_count: z.number().int(),
  }),
  /** Versions before this one (lineage). */
  replaced: z.number().int(),
  superseded_by: z.string().nullable(),
  /** Search only: the ranker's score and reason. */
  score: z.number().optional(),
  reason: z.string().optional(),
});
export type MemoryRow = z.infer<typeof MemoryRow>;

export const MemoryList = z.object({
  type: z.literal("memory_list"),
  project_id: z.string(),
  total: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  items: z.array(MemoryRow),
});
export type MemoryList = z.infer<typeof MemoryList>;

export const MemoryDetailQuery = z.object({ project_id: z.string().min(1), memory_id: z.string().min(1) });

export const MemoryVersion = z.object({
  memory_id: z.string(),
  content: z.string(),
  decision: z.string(),
  extractor: z.string(),
  valid_from: z.string(),
  valid_to: z.string().nullable(),
  status: z.enum(["active", "superseded", "forgotten"]),
  superseded_by_episode: z.string().nullable(),
});

export const MemoryMarkDTO = z.object({
  kind: z.enum(["pin", "wrong", "forget", "edit"]),
  at: z.string(),
  reason: z.string(),
  importance: z.number().nullable(),
});

export const MemoryDetail = z.object({
  type: z.literal("memory_detail"),
  project_id: z.string(),
  item: MemoryRow,
  tags: z.array(z.string()),
  file_paths: z.array(z.string()),
  /** Every version of the lineage, oldest first (this one included). */
  lineage: z.array(MemoryVersion),
  marks: z.array(MemoryMarkDTO),
  /** What outcome grading did to it (flag, decay for disuse), as `sqrl show` says it. */
  notes: z.array(z.string()).default([]),
  episodes: z.array(
    z.object({
      episode_id: z.string(),
      start_ts: z.string(),
      end_ts: z.string(),
      summary: z.string(),
      outcome: z.string(),
    }),
  ),
  events: z.array(z.object({ event_id: z.string(), timestamp: z.string(), event_type: z.string(), text: z.string() })),
});
export type MemoryDetail = z.infer<typeof MemoryDetail>;

const MemoryAction = { project_id: z.string().min(1), memory_id: z.string().min(1) };
export const ForgetRequest = z.object(MemoryAction);
export const EditRequest = z.object({
  ...MemoryAction,
  content: z.string().trim().min(3).max(1200),
  tags: z.array(z.string().max(40)).max(12).optional(),
});
export const PinRequest = z.object({
  ...MemoryAction,
  pinned: z.boolean().default(true),
  importance: z.number().min(0).max(1).default(1),
});
export const WrongRequest = z.object({ ...MemoryAction, reason: z.string().trim().min(1).max(500) });
export type EditRequest = z.infer<typeof EditRequest>;
export type PinRequest = z.infer<typeof PinRequest>;
export type WrongRequest = z.infer<typeof WrongRequest>;

export const MemoryActionResponse = z.object({
  type: z.literal("memory_action"),
  action: z.enum(["forget", "edit", "pin", "unpin", "wrong"]),
  /** The memory as it is now (for edit: the new version). */
  memory_id: z.string(),
  previous_id: z.string().nullable(),
  status: z.enum(["active", "superseded", "forgotten"]),
});
export type MemoryActionResponse = z.infer<typeof MemoryActionResponse>;

export const ProjectQuery = z.object({ project_id: z.string().min(1) });

export const ProjectOverview = z.object({
  type: z.literal("project_overview"),
  project_id: z.string(),
  events: z.object({ total: z.number().int(), unprocessed: z.number().int(), last_at: z.string().nullable() }),
  episodes: z.object({ total: z.number().int(), open: z.number().int() }),
  /** Counts per type and status. */
  memories: z.record(
    z.string(),
    z.object({ active: z.number().int(), superseded: z.number().int(), forgotten: z.number().int() }),
  ),
  pinned: z.number().int(),
  wrong: z.number().int(),
  /** Current global style items (user.db) of the configured user, served to every project. */
  global_style: z.number().int(),
  views: z.array(
    z.object({ name: z.string(), generated_at: z.string(), stale: z.boolean(), events_since: z.number().int() }),
  ),
  /** Last event captured per source tool. */
  sources: z.array(
    z.object({
      source_tool: z.string(),
      events: z.number().int(),
      /** The newest event's own date (a backfilled transcript keeps its old dates). */
      last_at: z.string(),
      /** When sqrl last took in this source's records for the project; null when not known. */
      captured_at: z.string().nullable(),
    }),
  ),
  /** The configured LLM: provider, model, billing, tokens today of the cap, tokens per session (last 7 days). */
  llm: z.object({
    provider: z.string(),
    model: z.string(),
    billing: z.string(),
    tokens_today: z.number().int(),
    daily_cap: z.number().int(),
    sessions: z.number().int(),
    tokens_per_session: z.number().int().nullable(),
  }),
});
export type ProjectOverview = z.infer<typeof ProjectOverview>;

/** Files the project's active memory is about, most mentioned first (what "what the agent sees" offers to pick). */
export const ProjectFiles = z.object({
  type: z.literal("project_files"),
  project_id: z.string(),
  files: z.array(z.string()),
});
export type ProjectFiles = z.infer<typeof ProjectFiles>;

export const CallLogQuery = z.object({
  project_id: z.string().min(1),
  limit: z.number().int().min(1).max(1000).default(100),
  days: z.number().int().min(1).max(365).default(14),
});

export const CallLog = z.object({
  type: z.literal("call_log"),
  project_id: z.string(),
  total: z.number().int(),
  calls: z.array(
    z.object({
      id: z.number().int(),
      ts: z.string(),
      tool: z.string(),
      args: z.record(z.string(), z.unknown()),
      memory_ids: z.array(z.string()),
      token_estimate: z.number().int().nullable(),
      latency_ms: z.number(),
      error: z.string().nullable(),
    }),
  ),
  /** Tokens served per UTC day, oldest first, one entry per day of the window (0 when idle). */
  per_day: z.array(z.object({ day: z.string(), tokens: z.number().int(), calls: z.number().int() })),
});
export type CallLog = z.infer<typeof CallLog>;

// ---- tool-call trace -----------------------------------------------------------------------------
/** One MCP tool call, for the project's `tool_calls` table (`sqrl log`). */
export const ToolCallTrace = z.object({
  project_id: z.string().min(1),
  ts: z.string(),
  tool: z.string().min(1).max(200),
  args: z.record(z.string(), z.unknown()),
  memory_ids: z.array(z.string()),
  token_estimate: z.number().int().nullable(),
  latency_ms: z.number().nonnegative(),
  error: z.string().nullable(),
});
export type ToolCallTrace = z.infer<typeof ToolCallTrace>;

export const Accepted = z.object({ ok: z.literal(true) });
export type Accepted = z.infer<typeof Accepted>;

// ---- the route table -----------------------------------------------------------------------------
/** Longest query or task text the read paths rank by; longer text is clipped and the answer says so. */
export const MAX_QUERY_CHARS = 4_000;

export interface Route<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  path: string;
  /** How clients call it: GET with a query string, or POST with a JSON body. */
  method: "GET" | "POST";
  request: Req;
  response: Res;
  /** Where it is answered: by the engine (the daemon forwards it unless `forwarded` is false) or by the daemon alone. */
  server: "engine" | "daemon" | "both";
  /** false: the daemon does not forward it (its own batcher calls the engine). */
  forwarded?: boolean;
  /**
   * A POST route that also answers GET with a query string (reference §5 names GET): the fields
   * that are arrays (repeatable, or comma-separated) and numbers in that form.
   */
  query?: { arrays: readonly string[]; numeric: readonly string[] };
}

const route = <Req extends z.ZodType, Res extends z.ZodType>(r: Route<Req, Res>): Route<Req, Res> => r;
const NoInput = z.object({});
const VIEW_QUERY = { arrays: ["scope_paths", "exclude_memory_ids"], numeric: ["context_budget_tokens"] } as const;

export const ROUTES = {
  health: route({ path: "/health", method: "GET", request: NoInput, response: Health, server: "both" }),
  status: route({ path: "/status", method: "GET", request: NoInput, response: DaemonStatus, server: "daemon" }),
  process_events: route({
    path: "/process_events",
    method: "POST",
    request: ProcessEventsRequest,
    response: ProcessEventsResponse,
    server: "engine",
    forwarded: false,
  }),
  task_context: route({
    path: "/task_context",
    method: "POST",
    request: TaskContextRequest,
    response: TaskContext,
    server: "engine",
  }),
  search_memory: route({
    path: "/search_memory",
    method: "POST",
    request: SearchQuery,
    response: SearchResponse,
    server: "engine",
    query: { arrays: ["types", "scope_paths", "exclude_memory_ids"], numeric: ["top_k", "context_budget_tokens"] },
  }),
  user_style: route({
    path: "/views/user_style",
    method: "POST",
    request: ViewQuery,
    response: UserStyleView,
    server: "engine",
    query: VIEW_QUERY,
  }),
  project_brief: route({
    path: "/views/project_brief",
    method: "POST",
    request: ViewQuery,
    response: ProjectBriefView,
    server: "engine",
    query: VIEW_QUERY,
  }),
  pitfalls: route({
    path: "/views/pitfalls",
    method: "POST",
    request: ViewQuery,
    response: PitfallsView,
    server: "engine",
    query: VIEW_QUERY,
  }),
  timeline: route({
    path: "/timeline",
    method: "GET",
    request: TimelineQuery,
    response: Timeline,
    server: "engine",
    query: { arrays: [], numeric: ["limit", "context_budget_tokens"] },
  }),
  recall: route({
    path: "/recall",
    method: "GET",
    request: RecallQuery,
    response: EpisodeRecall,
    server: "engine",
    query: { arrays: [], numeric: ["context_budget_tokens"] },
  }),
  tool_calls: route({
    path: "/tool_calls",
    method: "POST",
    request: ToolCallTrace,
    response: Accepted,
    server: "engine",
  }),
  // sqrl ui: browsing, and the corrections it makes (writes go through the engine like every other)
  memories: route({
    path: "/memories",
    method: "GET",
    request: MemoryListQuery,
    response: MemoryList,
    server: "engine",
    query: { arrays: ["types"], numeric: ["offset", "limit"] },
  }),
  memory: route({
    path: "/memory",
    method: "GET",
    request: MemoryDetailQuery,
    response: MemoryDetail,
    server: "engine",
    query: { arrays: [], numeric: [] },
  }),
  overview: route({
    path: "/overview",
    method: "GET",
    request: ProjectQuery,
    response: ProjectOverview,
    server: "engine",
    query: { arrays: [], numeric: [] },
  }),
  files: route({
    path: "/files",
    method: "GET",
    request: ProjectQuery,
    response: ProjectFiles,
    server: "engine",
    query: { arrays: [], numeric: [] },
  }),
  calls: route({
    path: "/calls",
    method: "GET",
    request: CallLogQuery,
    response: CallLog,
    server: "engine",
    query: { arrays: [], numeric: ["limit", "days"] },
  }),
  memories_forget: route({
    path: "/memories/forget",
    method: "POST",
    request: ForgetRequest,
    response: MemoryActionResponse,
    server: "engine",
  }),
  memories_edit: route({
    path: "/memories/edit",
    method: "POST",
    request: EditRequest,
    response: MemoryActionResponse,
    server: "engine",
  }),
  memories_pin: route({
    path: "/memories/pin",
    method: "POST",
    request: PinRequest,
    response: MemoryActionResponse,
    server: "engine",
  }),
  memories_wrong: route({
    path: "/memories/wrong",
    method: "POST",
    request: WrongRequest,
    response: MemoryActionResponse,
    server: "engine",
  }),
  // sqrl ui: the project's last `sqrl eval`, a run of it, and forgetting what it found never needed
  eval: route({
    path: "/eval",
    method: "GET",
    request: ProjectQuery,
    response: EvalStatus,
    server: "engine",
    query: { arrays: [], numeric: [] },
  }),
  eval_run: route({
    path: "/eval/run",
    method: "POST",
    request: EvalRunRequest,
    response: EvalStatus,
    server: "engine",
  }),
  eval_forget_unused: route({
    path: "/eval/forget_unused",
    method: "POST",
    request: EvalForgetRequest,
    response: EvalForgetResponse,
    server: "engine",
  }),
  /**
   * A one-time login for `sqrl ui`: the daemon writes the code into a file only this user can read
   * (never into a URL or a command line) and answers with the file's path; opening the file logs the
   * browser in. The page itself is served under /ui/ with its own checks.
   */
  ui_login_code: route({
    path: "/ui_login_code",
    method: "POST",
    request: z.object({ project: z.string().min(1).optional() }),
    response: z.object({ file: z.string(), port: z.number().int(), expires_in_s: z.number().int() }),
    server: "daemon",
  }),
} as const;

export type RouteName = keyof typeof ROUTES;
export type AnyRoute = (typeof ROUTES)[RouteName];
export type RequestOf<R extends Route> = z.input<R["request"]>;
export type ResponseOf<R extends Route> = z.infer<R["response"]>;

/** The route at `path`, if any. */
export function routeAt(path: string): AnyRoute | undefined {
  return Object.values(ROUTES).find((r) => r.path === path);
}

/** Methods a route answers: its own, plus GET when it takes a query string. */
export function methodsOf(r: Route): Array<"GET" | "POST"> {
  return r.method === "POST" && r.query ? ["POST", "GET"] : [r.method];
}

/** Routes the daemon passes to the engine unchanged. */
export function forwardedRoutes(): AnyRoute[] {
  return Object.values(ROUTES).filter((r: Route) => r.server === "engine" && r.forwarded !== false);
}
