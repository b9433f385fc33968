/**
 * Keeps the renderer's strict CSP (`script-src 'self'`, no inline scripts) true in dev too.
 *
 * In dev, plugins inject inline `<script type="module">` blocks into index.html (React Refresh's
 * preamble), which the CSP rightly blocks. Instead of loosening the policy for dev, this plugin
 * moves every inline module script into a file the dev server serves from our own origin, so the
 * page the developer runs is under exactly the policy users get. Dev server only; builds never
 * contain inline scripts.
 */
import type { Plugin } from 'vite';

const PREFIX = '/@warden-inline/';

/** Rewrites inline module scripts in index.html to same-origin files (dev server only). */
export function externalizeInlineScriptsInDev(): Plugin {
  const scripts = new Map<string, string>();
  return {
    name: 'warden:externalize-inline-scripts-in-dev',
    apply: 'serve',
    transformIndexHtml: {
      order: 'post',
      handler(html) {
        return html.replace(/<script type="module"([^>]*)>([\s\S]*?)<\/script>/g, (whole, attrs: string, code: string) => {
          if (/\ssrc=/.test(attrs) || code.trim() === '') return whole;
          const name = `inline-${scripts.size}.js`;
          scripts.set(name, code);
          return `<script type="module"${attrs} src="${PREFIX}${name}"></script>`;
        });
      },
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = req.url?.split('?')[0] ?? '';
        const code = path.startsWith(PREFIX) ? scripts.get(path.slice(PREFIX.length)) : undefined;
        if (code === undefined) return next();
        res.setHeader('Content-Type', 'text/javascript');
        res.end(code);
      });
    },
  };
}
