import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { portalApi } from '../../services/portal-api/src/service.ts'

/**
 * The portal service built as in production (its composition root), with fastify's own route
 * table recorded through `beforeRoutes` (an onRoute hook installed before any route exists): a
 * screen another change adds is timed by bench:portal without anyone listing it.
 */
export async function buildPortalWithRoutes(deps: PlatformDeps): Promise<{ app: App; gets: string[] }> {
  const gets: string[] = []
  const app = await portalApi.build(deps, {
    beforeRoutes: async (a: App) => {
      a.addHook('onRoute', (route) => {
        if ([route.method].flat().includes('GET')) gets.push(route.url)
      })
    },
  } as Parameters<typeof portalApi.build>[1])
  await app.ready()
  return { app, gets }
}

/** The screens: GET routes a tenant's browser opens (the portal and the contact pages), not the API. */
export const isScreen = (url: string) => url === '/portal' || url.startsWith('/portal/') || url.startsWith('/contacts/')

/** The route with each `:param` filled from `values`; the names it could not fill when some are unknown. */
export function fillRoute(url: string, values: Record<string, string>): { path: string } | { missing: string[] } {
  const missing: string[] = []
  const path = url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const v = values[name]
    if (v === undefined) missing.push(name)
    return encodeURIComponent(v ?? '')
  })
  if (url.includes('*')) missing.push('*')
  return missing.length ? { missing } : { path }
}

/**
 * The first link on a page to the same path with a paging parameter (a cursor, `before`,
 * `after`): what a tenant clicks for the next page, whatever each screen calls it.
 */
export function laterPageLink(body: string, path: string): string | null {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const m = new RegExp(`href="(${escaped}\\?[^"]*\\b(?:cursor|before|after)=[^"]*)"`).exec(body)
  return m ? m[1]!.replaceAll('&amp;', '&') : null
}

/** `path?name=value` for each non-empty option of each `<select>` of a list page's GET forms (its filters). */
export function filterLinks(body: string, path: string): string[] {
  const links: string[] = []
  const getForms = [...body.matchAll(/<form[^>]*\bmethod="get"[^>]*>([\s\S]*?)<\/form>/gi)].map((m) => m[1]!).join('')
  for (const select of getForms.matchAll(/<select[^>]*\bname="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    for (const option of select[2]!.matchAll(/<option[^>]*\bvalue="([^"]+)"/g)) {
      links.push(`${path}?${encodeURIComponent(select[1]!)}=${encodeURIComponent(option[1]!.replaceAll('&amp;', '&'))}`)
    }
  }
  return links
}
