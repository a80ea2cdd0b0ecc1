/**
 * The small HTML pages `sqrl ui` answers before the app loads (no session, a stale login link):
 * self-contained, light and dark, no script. `body` is trusted HTML written in this codebase.
 */
export function messagePage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>sqrl · ${title}</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:15vh auto;padding:0 1.5rem">
<p style="font-weight:600;letter-spacing:.02em;opacity:.7">sqrl</p><h1 style="font-size:1.5rem;margin:.2rem 0 1rem">${title}</h1><p>${body}</p></body></html>`;
}
