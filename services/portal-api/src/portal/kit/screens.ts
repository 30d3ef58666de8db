import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'

/**
 * A portal screen, declared once (portal/index.ts lists them): the navigation, the flash codes
 * and the routes are all derived from these declarations, so a new screen is its own folder plus
 * one line in that list (docs/portal.md, "Adding a screen").
 */
export interface ScreenDeclaration {
  /** where it lives; the navigation links here and marks it current for the paths under it */
  readonly path: string
  /** its label in the navigation (in the list's order); none for a screen reached from others */
  readonly nav?: string
  /**
   * the confirmations its redirects may show (post/redirect/get): `redirectTo(reply, path, code)`
   * puts the code, never free text, in `?flash=`, so a URL cannot put words on the tenant's
   * screen and no value (let alone a secret) travels in it; unknown codes show nothing
   */
  readonly flashes?: Readonly<Record<string, string>>
  /** registers its routes in the screens' scope (session required, forms parsed, errors as pages) */
  readonly register?: (scope: App, deps: PlatformDeps) => void
}

interface NavEntry {
  readonly path: string
  readonly label: string
}

/** What the page function derives from the declarations: the navigation and the flash texts. */
export interface ScreenCatalogue {
  readonly nav: readonly NavEntry[]
  flashText(code: string | null): string | null
}

/**
 * The catalogue of a list of declarations. Two screens at one path, or one flash code declared
 * twice, would make a link or a confirmation ambiguous: refused at start-up, not found later.
 */
export function catalogueOf(screens: readonly ScreenDeclaration[]): ScreenCatalogue {
  const flashes = new Map<string, string>()
  const paths = new Set<string>()
  for (const s of screens) {
    if (paths.has(s.path)) throw new Error(`two portal screens at ${s.path}`)
    paths.add(s.path)
    for (const [code, text] of Object.entries(s.flashes ?? {})) {
      if (flashes.has(code)) throw new Error(`flash code ${code} declared twice`)
      flashes.set(code, text)
    }
  }
  return {
    nav: screens.flatMap((s) => (s.nav === undefined ? [] : [{ path: s.path, label: s.nav }])),
    flashText: (code) => (code === null ? null : (flashes.get(code) ?? null)),
  }
}

/** Before the screens are registered (an app without them): no navigation, no flashes. */
export const NO_SCREENS: ScreenCatalogue = catalogueOf([])
