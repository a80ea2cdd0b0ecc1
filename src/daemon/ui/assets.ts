/**
 * The page of `sqrl ui`, bundled into the binary by Bun's HTML import (index.html → its script and
 * stylesheet, minified, content-hashed). The daemon serves these files itself rather than through
 * `Bun.serve` routes: routes would answer before the session check, and every file of the page is
 * behind the cookie. Run from source (`bun src/main.ts`), the same entry is bundled in memory on
 * first use.
 */
import page from "../../ui/index.html";

export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

export interface PageBundle {
  /** index.html with its asset links pointing under /ui/assets/. */
  html: string;
  /** Files by name (e.g. `chunk-abc123.js`). */
  assets: Map<string, Asset>;
}

export const ASSET_PREFIX = "/ui/assets/";

let loaded: Promise<PageBundle> | undefined;

export function pageBundle(): Promise<PageBundle> {
  loaded ??= load();
  return loaded;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Asset links in the built HTML are root-relative (`/chunk-….js`): move them under /ui/assets/. */
function relink(html: string, names: ReadonlySet<string>): string {
  return html.replace(/(src|href)="\.?\/([^"/]+)"/g, (whole, attr: string, name: string) =>
    names.has(name) ? `${attr}="${ASSET_PREFIX}${name}"` : whole,
  );
}

async function load(): Promise<PageBundle> {
  const assets = new Map<string, Asset>();
  let html = "";
  if (page.files && page.files.length > 0) {
    for (const f of page.files) {
      const body = new Uint8Array(await Bun.file(f.path).arrayBuffer());
      if (f.loader === "html") html = new TextDecoder().decode(body);
      else assets.set(baseName(f.path), { body, type: f.headers["content-type"], etag: f.headers.etag });
    }
  } else {
    const built = await Bun.build({
      entrypoints: [page.index],
      minify: true,
      target: "browser",
      define: { "process.env.NODE_ENV": '"production"' },
    });
    if (!built.success) throw new Error(`bundling the ui page failed: ${built.logs.map((l) => l.message).join("; ")}`);
    for (const out of built.outputs) {
      const body = new Uint8Array(await out.arrayBuffer());
      if (out.loader === "html") html = new TextDecoder().decode(body);
      else assets.set(baseName(out.path), { body, type: out.type, etag: out.hash ?? String(body.length) });
    }
  }
  return { html: relink(html, new Set(assets.keys())), assets };
}
