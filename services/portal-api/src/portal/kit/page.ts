import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { frameAncestorsOf } from '@lsv/shared/domain/tenants/frame-ancestors.ts'
import { brandingOf } from '@lsv/shared/domain/tenants/branding.ts'
import { logoOf } from '@lsv/shared/domain/tenants/logo.ts'
import { html, noStore, type SafeHtml } from './html.ts'
import { bannerOf } from './banner-slot.ts'
import { relativeTimes } from './time.ts'
import { labelTableCells } from './table-labels.ts'
import { errorSummary, problemsOf } from './error-summary.ts'
import { NO_SCREENS, type ScreenCatalogue } from './screens.ts'

export { html, SafeHtml } from './html.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** the navigation and flash codes derived from the screens' declarations (portal/index.ts) */
    portalScreens?: ScreenCatalogue
    /** the clock the pages' relative times are computed from (kit/time.ts; the platform's clock) */
    portalNow?: () => number
  }
}

export const ASSET_CSS = '/portal/assets/portal.css'
export const ASSET_JS = '/portal/assets/portal.js'
export const ASSET_ICON = '/portal/assets/favicon.svg'
/**
 * An accent's stylesheet, `…/brand/<rrggbb>.css` (assets.ts): the CSP allows no inline style, and
 * the colour alone decides its content, so one URL per colour, the same for every tenant.
 */
export const ASSET_BRAND_CSS = '/portal/assets/brand'
/**
 * The account's logo, `…/logo/<sha256>` (settings/logo-image.ts): behind the session, and the URL
 * changes with the content, so it may be cached for good; `img-src 'self'` is all it needs.
 */
export const ASSET_LOGO = '/portal/assets/logo'

/** The landing page after sign-in: the overview (overview/index.ts). */
export const HOME_PATH = '/portal/'
export const SIGN_OUT_PATH = '/portal/sign-out'

/**
 * The policy of every portal page: one stylesheet (and, signed in, one script) from this origin;
 * no inline script or style, no CDN, forms only to this origin. `img-src data:` is for inline
 * icons only. A page without an account (signed out, a dead link) runs no script at all.
 *
 * Framing: none, unless the account lists origins that may embed its portal (issue 22, job 9;
 * docs/portal.md, "Embedding"); then `'self'` and those origins. The list was checked to be bare
 * https origins when the operator set it (frame-ancestors.ts), so it cannot inject a directive.
 * Pages without an account are never framable.
 */
function policyOf(account: AccountRecord | null): string {
  const ancestors = account ? frameAncestorsOf(account) : []
  return [
    account ? "default-src 'self'" : "default-src 'none'",
    ...(account ? ["script-src 'self'"] : []),
    "style-src 'self'",
    "img-src 'self' data:",
    `frame-ancestors ${ancestors.length === 0 ? "'none'" : ["'self'", ...ancestors].join(' ')}`,
    "form-action 'self'",
    "base-uri 'none'",
  ].join('; ')
}

/** The name the screens show: the tenant's display name, else the operator's, else the public id. */
export function shownName(account: AccountRecord): string {
  return brandingOf(account).display_name ?? account.name ?? account.public_id
}

/** the accent's stylesheet link, when the account has an accent (portal.css has the default) */
function brandStylesheet(account: AccountRecord): SafeHtml | '' {
  const { accent } = brandingOf(account)
  return accent ? html`<link rel="stylesheet" href="${ASSET_BRAND_CSS}/${accent.slice(1)}.css">` : ''
}

/** the account's logo in the header, when it has one; its text alternative is the name shown */
function brandLogo(account: AccountRecord): SafeHtml | '' {
  const logo = logoOf(account)
  return logo ? html`<img class="logo" src="${ASSET_LOGO}/${logo.id}" alt="${shownName(account)}"> ` : ''
}

/** A navigation entry is the current one for its own path and, except the home, for the paths under it. */
function isCurrent(path: string, current: string): boolean {
  return current === path || (path !== HOME_PATH && current.startsWith(path))
}

/** What one page shows: its view model (every portal answer with a body is one of these). */
export interface PageView {
  /** the HTTP status (200 when absent) */
  status?: number
  title: string
  /** the page's heading, when it says more than the title */
  heading?: string
  body: SafeHtml
  /** the signed-in account: the page gets the frame (header, navigation, banner, sign-out) */
  account?: AccountRecord | null
  /** the path of the screen (marks the current navigation entry; '' marks none) */
  current?: string
  /** a one-line confirmation; absent: the text of the request's `?flash=` code, if it is declared */
  flash?: string | null
  /**
   * a sentence for the error summary at the top (error-summary.ts), which also links each field
   * error of the body; the fields carry the details
   */
  error?: string | null
}

/** the header of a signed-in page: the account, the navigation and sign-out */
function frameHeader(account: AccountRecord, current: string, catalogue: ScreenCatalogue): SafeHtml {
  const nav = catalogue.nav.map((n) => html`<li><a href="${n.path}"${isCurrent(n.path, current) ? html` aria-current="page"` : ''}>${n.label}</a></li>`)
  return html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">${brandLogo(account)}Portal · <span class="account">${shownName(account)}</span> <code title="account public id">${account.public_id}</code></p>
<nav aria-label="Portal">
<ul>${nav}
<li><form method="post" action="${SIGN_OUT_PATH}"><button type="submit" class="link">Sign out</button></form></li>
</ul>
</nav>
</header>`
}

/**
 * What a page says first, and where its focus starts (issue 29, D11 and D12): a refused form's
 * error summary, focused; else the confirmation of the post that led here, focused, so the next
 * Tab goes on from the result and not from the top of the page. `autofocus` on a `tabindex="-1"`
 * element: no script.
 */
function resultOf(view: PageView, flash: string | null): { body: SafeHtml; top: SafeHtml | '' } {
  const { body, problems } = problemsOf(view.body)
  const summary = errorSummary(view.error, problems)
  if (summary) return { body, top: html`${flash ? html`<p class="flash" role="status">${flash}</p>` : ''}${summary}` }
  return { body, top: flash ? html`<p class="flash" id="flash" role="status" tabindex="-1" autofocus>${flash}</p>` : '' }
}

/** the one page skeleton: head, and, for an account, the frame around main */
function pageHtml(view: PageView, flash: string | null, banner: SafeHtml | '', catalogue: ScreenCatalogue): string {
  const account = view.account ?? null
  const { body, top } = resultOf(view, flash)
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${view.title}${account ? ` · ${shownName(account)}` : ''} · Portal</title>
<link rel="icon" href="${ASSET_ICON}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSET_CSS}">
${account ? brandStylesheet(account) : ''}
${account ? html`<script src="${ASSET_JS}" defer></script>` : ''}
</head>
<body>
${account ? frameHeader(account, view.current ?? '', catalogue) : ''}
<main id="main" tabindex="-1">
<h1>${view.heading ?? view.title}</h1>
${banner}
${top}
${body}
</main>
${account ? html`<footer class="bottom"><p>Signed in through a portal session. <a href="${HOME_PATH}">Portal home</a></p></footer>` : ''}
</body>
</html>
`.value
}

/** the `?flash=` code of the request's URL (read from the URL: a screen's query schema need not name it) */
function flashCodeOf(url: string): string | null {
  const query = url.indexOf('?')
  return query < 0 ? null : new URLSearchParams(url.slice(query + 1)).get('flash')
}

/** the confirmation the request's `?flash=` code stands for, when a screen declared it */
export function flashOf(request: FastifyRequest): string | null {
  return (request.server.portalScreens ?? NO_SCREENS).flashText(flashCodeOf(request.url))
}

/**
 * Sends a page with the portal's headers (no caching, no referrer, the policy above). With an
 * allow-list, no `X-Frame-Options`: it can say only DENY or SAMEORIGIN, and browsers that know
 * `frame-ancestors` ignore it anyway.
 */
export function sendPage(reply: FastifyReply, view: PageView): FastifyReply {
  const account = view.account ?? null
  const catalogue = reply.server.portalScreens ?? NO_SCREENS
  const flash = view.flash !== undefined ? view.flash : account ? flashOf(reply.request) : null
  // the account's webhook banner, when the screens' hook computed one (endpoint-banner.ts, banner-slot.ts)
  const banner = account ? bannerOf(reply.request) : ''
  return noStore(reply, policyOf(account), { frameable: account !== null && frameAncestorsOf(account).length > 0 })
    .code(view.status ?? 200)
    .type('text/html; charset=utf-8')
    .send(labelTableCells(relativeTimes(pageHtml(view, flash, banner, catalogue), (reply.server.portalNow ?? Date.now)())))
}

/** Post/redirect/get: 303 to a screen, with a flash code (a screen's `flashes`) in the query; never a secret. */
export function redirectTo(reply: FastifyReply, path: string, flash?: string): FastifyReply {
  const url = flash ? `${path}${path.includes('?') ? '&' : '?'}flash=${encodeURIComponent(flash)}` : path
  return noStore(reply, policyOf(null)).redirect(url, 303)
}
