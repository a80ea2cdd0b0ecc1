/**
 * Python: pyproject.toml or requirements.txt (frameworks, databases, test runner), the version pin and
 * the package manager its lockfile names.
 */
import { parse as parseToml } from "smol-toml";
import { add, has, readText, type Facts } from "./facts.ts";

const PY_FRAMEWORKS: Record<string, string> = {
  fastapi: "FastAPI",
  django: "Django",
  flask: "Flask",
  starlette: "Starlette",
  litestar: "Litestar",
  typer: "Typer",
  click: "Click",
  pydantic: "Pydantic",
  streamlit: "Streamlit",
  celery: "Celery",
  pytorch: "PyTorch",
  torch: "PyTorch",
  langchain: "LangChain",
};
const PY_DATABASES: Record<string, string> = {
  sqlalchemy: "SQLAlchemy",
  psycopg: "PostgreSQL",
  psycopg2: "PostgreSQL",
  "psycopg2-binary": "PostgreSQL",
  asyncpg: "PostgreSQL",
  pymongo: "MongoDB",
  motor: "MongoDB",
  redis: "Redis",
  alembic: "Alembic migrations",
  sqlmodel: "SQLModel",
  "django-redis": "Redis",
};

function depName(spec: string): string {
  return spec
    .trim()
    .split(/[\s<>=!~;[(]/)[0]!
    .toLowerCase();
}

export function readPython(root: string, facts: Facts): void {
  const text = readText(root, "pyproject.toml");
  const names = new Set<string>();
  let source = "requirements.txt";
  if (text) {
    source = "pyproject.toml";
    try {
      const doc = parseToml(text) as Record<string, any>;
      for (const d of (doc.project?.dependencies ?? []) as string[]) names.add(depName(d));
      for (const group of Object.values((doc.project?.["optional-dependencies"] ?? {}) as Record<string, string[]>))
        for (const d of group) names.add(depName(d));
      for (const group of Object.values((doc["dependency-groups"] ?? {}) as Record<string, unknown[]>))
        for (const d of group) if (typeof d === "string") names.add(depName(d));
      for (const d of Object.keys(doc.tool?.poetry?.dependencies ?? {})) names.add(d.toLowerCase());
      for (const d of Object.keys(doc.tool?.poetry?.group?.dev?.dependencies ?? {})) names.add(d.toLowerCase());
      const rp = doc.project?.["requires-python"] ?? doc.tool?.poetry?.dependencies?.python;
      if (typeof rp === "string") add(facts, "runtime_version", `Python ${rp}`, "pyproject.toml");
      if (doc.tool?.ruff)
        add(facts, "lint_command", "Lint: `ruff check` (configured in pyproject.toml)", "pyproject.toml", {
          value: "ruff check",
        });
      if (doc.tool?.pytest) names.add("pytest");
      if (doc.tool?.mypy)
        add(facts, "typecheck_command", "Type check: `mypy` (configured in pyproject.toml)", "pyproject.toml", {
          value: "mypy",
        });
    } catch {
      // unreadable TOML: say nothing rather than guess
    }
  }
  const req = readText(root, "requirements.txt");
  if (req)
    for (const line of req.split("\n"))
      if (line.trim() && !line.trim().startsWith("#") && !line.startsWith("-")) names.add(depName(line));
  if (!text && !req && !has(root, "setup.py")) return;
  add(facts, "language", "Python", text ? "pyproject.toml" : req ? "requirements.txt" : "setup.py", {
    tag: "python",
    importance: 0.75,
  });
  for (const [dep, name] of Object.entries(PY_FRAMEWORKS))
    if (names.has(dep)) add(facts, "framework", name, source, { tag: name, importance: 0.8 });
  for (const [dep, name] of Object.entries(PY_DATABASES))
    if (names.has(dep)) add(facts, "database", name, source, { tag: name });
  if (names.has("pytest")) {
    add(facts, "test_framework", "pytest", source, { tag: "pytest" });
    const prefix = has(root, "uv.lock") ? "uv run " : has(root, "poetry.lock") ? "poetry run " : "";
    add(facts, "test_command", `Tests: \`${prefix}pytest\``, source, { value: `${prefix}pytest` });
  }
  const pm = has(root, "uv.lock")
    ? ["uv", "uv.lock"]
    : has(root, "poetry.lock")
      ? ["poetry", "poetry.lock"]
      : has(root, "Pipfile.lock")
        ? ["pipenv", "Pipfile.lock"]
        : null;
  if (pm)
    add(facts, "python_package_manager", `Python packages managed with ${pm[0]}`, pm[1]!, { tag: pm[0], value: pm[0] });
}
