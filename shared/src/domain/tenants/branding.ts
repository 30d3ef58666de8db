import type { AccountRecord, PortalBranding } from '../../model/records.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'
import { atMostCodePoints } from '../../lib/code-points.ts'

/**
 * Light branding of an account's portal (issue 22, job 9; docs/portal.md, "Branding"): a display
 * name and an accent colour. The accent is painted in two places (portal.css): as a band across
 * the top of every screen, on the page's own background, and as the background of the display
 * name, in a text colour derived from it. So a colour is accepted only when
 * - the derived text (black or white, whichever reads better) reaches 4.5:1 on it (WCAG 1.4.3), and
 * - the band reaches 3:1 against the page in light AND dark mode (WCAG 1.4.11, a non-text
 *   boundary): a pale yellow vanishes on white, a navy on near-black.
 * The same text at 4.5:1 on both backgrounds cannot be asked of one colour (white and #121212
 * leave no luminance that is 4.5:1 from both), which is why the accent is never text on the page.
 */

/** the page backgrounds the band is drawn on: Chromium's `Canvas` in each scheme (portal.css paints html with it) */
const PAGE_BACKGROUNDS = { light: '#ffffff', dark: '#121212' } as const
const TEXT_CONTRAST = 4.5
const BAND_CONTRAST = 3
/** in characters (docs/portal.md: "at most 80"): code points, as the schemas count every stated limit (lib/code-points.ts) */
const MAX_DISPLAY_NAME = 80
const HEX = /^#[0-9a-f]{6}$/

function channel(v: number): number {
  const c = v / 255
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
}

/** relative luminance of `#rrggbb` (WCAG 2.x) */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => channel(Number.parseInt(hex.slice(i, i + 2), 16)))
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
}

/** the WCAG contrast ratio of two `#rrggbb` colours, 1 to 21 */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

/** the text colour on the accent: black or white, whichever contrasts more */
export function textOnAccent(accent: string): '#000000' | '#ffffff' {
  return contrastRatio(accent, '#000000') >= contrastRatio(accent, '#ffffff') ? '#000000' : '#ffffff'
}

/** Why `accent` (`#rrggbb`, lower-case) cannot be used, in the tenant's words; null when it can. */
export function accentProblem(accent: string): string | null {
  if (!HEX.test(accent)) return 'Give the colour as # and six hex digits, such as #2f6fd6.'
  const pct = (n: number) => n.toFixed(1)
  const onText = contrastRatio(accent, textOnAccent(accent))
  if (onText < TEXT_CONTRAST) return `Text on this colour would read at ${pct(onText)}:1; it needs ${TEXT_CONTRAST}:1. Choose a lighter or darker colour.`
  for (const [scheme, page] of Object.entries(PAGE_BACKGROUNDS)) {
    const band = contrastRatio(accent, page)
    if (band < BAND_CONTRAST) {
      const way = scheme === 'light' ? 'darker' : 'lighter'
      return `This colour is too close to the ${scheme} mode background (${pct(band)}:1; it needs ${BAND_CONTRAST}:1 in both light and dark mode). Choose a ${way} colour; mid-tones such as #2f6fd6 or #c2410c work in both.`
    }
  }
  return null
}

/** the accent as stored: lower-case; `''` clears it */
function normalizedAccent(raw: string): string | null {
  const v = raw.trim().toLowerCase()
  return v === '' ? null : v
}

/** The account's branding; records written before it existed have none. */
export function brandingOf(account: Pick<AccountRecord, 'portal_branding'>): PortalBranding {
  return account.portal_branding ?? { display_name: null, accent: null }
}

/**
 * Replaces the account's branding (the Settings screen's form). Refused, with nothing stored:
 * a display name longer than MAX_DISPLAY_NAME or with control characters (it goes into titles
 * and headers), an accent that is not `#rrggbb` or fails the contrast rules above.
 */
export async function setPortalBranding(deps: TenantDeps, accountId: string, raw: { display_name: string; accent: string }): Promise<PortalBranding> {
  await requireAccount(deps, accountId)
  const name = raw.display_name.trim()
  const accent = normalizedAccent(raw.accent)
  const issues = []
  if (!atMostCodePoints(name, MAX_DISPLAY_NAME)) issues.push(issue('/display_name', 'length', `Keep the name to ${MAX_DISPLAY_NAME} characters or fewer.`))
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  else if (/[\u0000-\u001f\u007f]/.test(name)) issues.push(issue('/display_name', 'characters', 'The name cannot contain line breaks or control characters.'))
  const problem = accent === null ? null : accentProblem(accent)
  if (problem) issues.push(issue('/accent', 'contrast', problem))
  if (issues.length) throw invalidPayload(...issues)
  // the logo is a field of its own (portal_logo, domain/tenants/logo.ts): this write leaves it be
  const branding: PortalBranding = { display_name: name === '' ? null : name, accent }
  await deps.tenants.updateAccount(accountId, { portal_branding: branding, updated_at: nowIso(deps) })
  return branding
}
