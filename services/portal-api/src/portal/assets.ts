import { readFileSync } from 'node:fs'
import type { App } from '@lsv/shared/http/base-app.ts'
import { ASSET_CSS, ASSET_JS } from './layout.ts'

/** The portal's stylesheet and script, read once at start-up (no build step, no CDN). */
const ASSETS = [
  { path: ASSET_CSS, file: 'portal.css', type: 'text/css; charset=utf-8' },
  { path: ASSET_JS, file: 'portal.js', type: 'text/javascript; charset=utf-8' },
] as const

export function registerPortalAssets(app: App): void {
  for (const asset of ASSETS) {
    const body = readFileSync(new URL(`./assets/${asset.file}`, import.meta.url), 'utf8')
    app.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .headers({
          'content-type': asset.type,
          // public files, the same for every tenant; short caching so a deployment shows soon
          'cache-control': 'public, max-age=300',
          'x-content-type-options': 'nosniff',
        })
        .send(body),
    )
  }
}
