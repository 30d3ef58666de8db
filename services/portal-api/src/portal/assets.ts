import { readFileSync } from 'node:fs'
import type { App } from '@lsv/shared/http/base-app.ts'
import { Type } from 'typebox'
import { accentProblem, textOnAccent } from '@lsv/shared/domain/tenants/branding.ts'
import { ASSET_BRAND_CSS, ASSET_CSS, ASSET_ICON, ASSET_JS } from './kit/page.ts'

/** The portal's stylesheet, script and icon, read once at start-up (no build step, no CDN). */
const ASSETS = [
  { path: ASSET_CSS, file: 'portal.css', type: 'text/css; charset=utf-8' },
  { path: ASSET_JS, file: 'portal.js', type: 'text/javascript; charset=utf-8' },
  { path: ASSET_ICON, file: 'favicon.svg', type: 'image/svg+xml' },
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
  registerBrandStylesheet(app)
}

const BrandParams = Type.Object({ file: Type.String({ pattern: '^[0-9a-f]{6}\\.css$' }) })

/**
 * An accent colour's stylesheet (layout.ts links it for a branded account): two custom
 * properties that portal.css paints with. Public and read by no one's data: the URL is the whole
 * input (a checked pattern), so it needs no session, costs nothing before the caller is known, and
 * may be cached for good. Colours the Settings screen would refuse answer 404, so no URL can put
 * an unreadable colour on a screen.
 */
function registerBrandStylesheet(app: App): void {
  app.get(`${ASSET_BRAND_CSS}/:file`, { schema: { hide: true, params: BrandParams } }, async (request, reply) => {
    const accent = `#${(request.params as { file: string }).file.slice(0, 6)}`
    if (accentProblem(accent) !== null) return reply.code(404).type('text/plain; charset=utf-8').send('not found')
    return reply
      .headers({
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(`:root {\n  --brand: ${accent};\n  --on-brand: ${textOnAccent(accent)};\n}\n`)
  })
}
