/**
 * Go (go.mod), Rust (Cargo.toml), Elixir (mix.exs) and Ruby (Gemfile): language, libraries that name
 * the framework or database, module, versions, and the default test command.
 */
import { parse as parseToml } from "smol-toml";
import { add, readText, type Facts } from "./facts.ts";

const GO_LIBS: Array<[string, string, "framework" | "database"]> = [
  ["github.com/gin-gonic/gin", "Gin", "framework"],
  ["github.com/labstack/echo", "Echo", "framework"],
  ["github.com/gofiber/fiber", "Fiber", "framework"],
  ["github.com/go-chi/chi", "chi", "framework"],
  ["github.com/spf13/cobra", "Cobra (CLI)", "framework"],
  ["github.com/charmbracelet/bubbletea", "Bubble Tea (TUI)", "framework"],
  ["google.golang.org/grpc", "gRPC", "framework"],
  ["gorm.io/gorm", "GORM", "database"],
  ["github.com/jackc/pgx", "PostgreSQL (pgx)", "database"],
  ["github.com/lib/pq", "PostgreSQL", "database"],
  ["github.com/mattn/go-sqlite3", "SQLite", "database"],
  ["modernc.org/sqlite", "SQLite", "database"],
  ["github.com/redis/go-redis", "Redis", "database"],
  ["go.mongodb.org/mongo-driver", "MongoDB", "database"],
  ["github.com/jmoiron/sqlx", "sqlx", "database"],
];
const RUST_LIBS: Record<string, [string, "framework" | "database"]> = {
  axum: ["Axum", "framework"],
  "actix-web": ["Actix Web", "framework"],
  rocket: ["Rocket", "framework"],
  warp: ["warp", "framework"],
  tokio: ["Tokio", "framework"],
  clap: ["clap (CLI)", "framework"],
  tauri: ["Tauri", "framework"],
  leptos: ["Leptos", "framework"],
  bevy: ["Bevy", "framework"],
  sqlx: ["sqlx", "database"],
  diesel: ["Diesel", "database"],
  "sea-orm": ["SeaORM", "database"],
  rusqlite: ["SQLite (rusqlite)", "database"],
  redis: ["Redis", "database"],
};
const ELIXIR_LIBS: Record<string, [string, "framework" | "database"]> = {
  phoenix: ["Phoenix", "framework"],
  phoenix_live_view: ["Phoenix LiveView", "framework"],
  ash: ["Ash", "framework"],
  oban: ["Oban", "framework"],
  ecto_sql: ["Ecto", "database"],
  postgrex: ["PostgreSQL", "database"],
  ecto_sqlite3: ["SQLite", "database"],
  myxql: ["MySQL", "database"],
};

export function readGo(root: string, facts: Facts): void {
  const text = readText(root, "go.mod");
  if (!text) return;
  add(facts, "language", "Go", "go.mod", { tag: "go", importance: 0.75 });
  const mod = /^module\s+(\S+)/m.exec(text)?.[1];
  if (mod) add(facts, "go_module", `Go module \`${mod}\``, "go.mod", { value: mod, importance: 0.5 });
  const ver = /^go\s+(\d+\.\d+(?:\.\d+)?)/m.exec(text)?.[1];
  if (ver) add(facts, "runtime_version", `Go ${ver}`, "go.mod", { value: ver });
  for (const [path, name, kind] of GO_LIBS)
    if (text.includes(path))
      add(facts, kind, name, "go.mod", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
  if (!facts.has("test_command"))
    add(facts, "test_command", "Tests: `go test ./...`", "go.mod", { value: "go test ./..." });
}

export function readCargo(root: string, facts: Facts): void {
  const text = readText(root, "Cargo.toml");
  if (!text) return;
  add(facts, "language", "Rust", "Cargo.toml", { tag: "rust", importance: 0.75 });
  try {
    const doc = parseToml(text) as Record<string, any>;
    const deps = {
      ...(doc.dependencies ?? {}),
      ...(doc["dev-dependencies"] ?? {}),
      ...(doc.workspace?.dependencies ?? {}),
    } as Record<string, unknown>;
    for (const [dep, [name, kind]] of Object.entries(RUST_LIBS))
      if (dep in deps)
        add(facts, kind, name, "Cargo.toml", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
    if (doc.workspace?.members) add(facts, "monorepo", "Cargo workspace", "Cargo.toml");
    if (typeof doc.package?.edition === "string")
      add(facts, "runtime_version", `Rust edition ${doc.package.edition}`, "Cargo.toml");
  } catch {
    // leave out what cannot be read
  }
  if (!facts.has("test_command"))
    add(facts, "test_command", "Tests: `cargo test`", "Cargo.toml", { value: "cargo test" });
}

export function readElixirRuby(root: string, facts: Facts): void {
  const mix = readText(root, "mix.exs");
  if (mix) {
    add(facts, "language", "Elixir", "mix.exs", { tag: "elixir", importance: 0.75 });
    for (const [dep, [name, kind]] of Object.entries(ELIXIR_LIBS))
      if (new RegExp(`\\{:${dep}\\b`).test(mix))
        add(facts, kind, name, "mix.exs", { tag: name, importance: kind === "framework" ? 0.8 : 0.7 });
    if (!facts.has("test_command")) add(facts, "test_command", "Tests: `mix test`", "mix.exs", { value: "mix test" });
  }
  const gem = readText(root, "Gemfile");
  if (gem) {
    add(facts, "language", "Ruby", "Gemfile", { tag: "ruby", importance: 0.75 });
    if (/gem\s+["']rails["']/.test(gem)) add(facts, "framework", "Rails", "Gemfile", { tag: "rails", importance: 0.8 });
    if (/gem\s+["']sinatra["']/.test(gem)) add(facts, "framework", "Sinatra", "Gemfile", { tag: "sinatra" });
    if (/gem\s+["']pg["']/.test(gem)) add(facts, "database", "PostgreSQL", "Gemfile", { tag: "postgresql" });
    if (/gem\s+["']rspec/.test(gem))
      add(facts, "test_command", "Tests: `bundle exec rspec`", "Gemfile", { value: "bundle exec rspec" });
  }
}
