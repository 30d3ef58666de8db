import type { FastifyReply } from 'fastify'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { frameAncestorsOf } from '@lsv/shared/domain/tenants/frame-ancestors.ts'
import { brandingOf } from '@lsv/shared/domain/tenants/branding.ts'
import { logoOf } from '@lsv/shared/domain/tenants/logo.ts'
import { html, noStore, type SafeHtml } from '../routes/portal/html.ts'
import { bannerOf } from './banner-slot.ts'

export { html, SafeHtml } from '../routes/portal/html.ts'

/**
 * The frame every portal screen shares: one stylesheet and one script, both served by this app
 * (assets.ts), so the policy allows exactly those; no inline script or style, no CDN, no framing,
 * forms only to this origin. `img-src data:` is for inline icons only.
 *
 * Framing: none, unless the account lists origins that may embed its portal (issue 22, job 9;
 * docs/portal.md, "Embedding"); then `'self'` and those origins. The list was checked to be bare
 * https origins when the operator set it (frame-ancestors.ts), so it cannot inject a directive.
 * Pages without an account (signed out, not found) are never framable.
 */
function screenCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `frame-ancestors ${frameAncestors.length === 0 ? "'none'" : ["'self'", ...frameAncestors].join(' ')}`,
    "form-action 'self'",
    "base-uri 'none'",
  ].join('; ')
}

const SCREEN_CSP = screenCsp([])

export const ASSET_CSS = '/portal/assets/portal.css'
export const ASSET_JS = '/portal/assets/portal.js'
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

/** The name the screens show: the tenant's display name, else the operator's, else the public id. */
function shownName(account: AccountRecord): string {
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

/** The landing page after sign-in: the overview (overview/index.ts). */
const HOME_PATH = '/portal/'

/** The screens, in the order of the navigation. Paths are fixed here so every screen links alike. */
const NAV = [
  { path: HOME_PATH, label: 'Overview' },
  { path: '/portal/connections', label: 'Inbound connections' },
  { path: '/portal/webhooks', label: 'Webhooks' },
  { path: '/portal/contacts', label: 'Contacts' },
  { path: '/portal/settings', label: 'Settings' },
  { path: '/portal/activity', label: 'Activity' },
  { path: '/portal/audit', label: 'Audit log' },
] as const

const SIGN_OUT_PATH = '/portal/sign-out'

/** A navigation entry is the current one for its own path and, except the home, for the paths under it. */
function isCurrent(path: string, current: string): boolean {
  return current === path || (path !== HOME_PATH && current.startsWith(path))
}

/** What the frame needs to know about the request. */
export interface Frame {
  account: AccountRecord
  /** the path of the screen (marks the current navigation entry) */
  current: string
  /** a one-line confirmation after a redirect (flash.ts) */
  flash?: string | null
  /** an error summary at the top (the fields carry the details) */
  error?: string | null
}

/** A whole screen: skip link, header with the account, navigation, main, footer. */
function screen(frame: Frame, title: string, body: SafeHtml, banner: SafeHtml | '' = ''): string {
  const nav = NAV.map((n) => html`<li><a href="${n.path}"${isCurrent(n.path, frame.current) ? html` aria-current="page"` : ''}>${n.label}</a></li>`)
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${shownName(frame.account)} · Portal</title>
<link rel="stylesheet" href="${ASSET_CSS}">
${brandStylesheet(frame.account)}
<script src="${ASSET_JS}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">${brandLogo(frame.account)}Portal · <span class="account">${shownName(frame.account)}</span> <code title="account public id">${frame.account.public_id}</code></p>
<nav aria-label="Portal">
<ul>${nav}
<li><form method="post" action="${SIGN_OUT_PATH}"><button type="submit" class="link">Sign out</button></form></li>
</ul>
</nav>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${banner}
${frame.flash ? html`<p class="flash" role="status">${frame.flash}</p>` : ''}
${frame.error ? html`<div class="error-summary" role="alert"><p>${frame.error}</p></div>` : ''}
${body}
</main>
<footer class="bottom"><p>Signed in through a portal session. <a href="/portal/">Portal home</a></p></footer>
</body>
</html>
`.value
}

/**
 * Sends a screen with the portal's headers (no caching, no referrer, the policy above). With an
 * allow-list, no `X-Frame-Options`: it can say only DENY or SAMEORIGIN, and browsers that know
 * `frame-ancestors` ignore it anyway.
 */
export function sendScreen(reply: FastifyReply, status: number, frame: Frame, title: string, body: SafeHtml): FastifyReply {
  const ancestors = frameAncestorsOf(frame.account)
  return (
    noStore(reply, screenCsp(ancestors), { frameable: ancestors.length > 0 })
      .code(status)
      .type('text/html; charset=utf-8')
      // the account's webhook banner, when the screens' hook computed one (endpoint-banner.ts, banner-slot.ts)
      .send(screen(frame, title, body, bannerOf(reply.request)))
  )
}

/** A page outside the frame (no session, not found without an account): plain, same headers. */
function plainPage(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Portal</title>
<link rel="stylesheet" href="${ASSET_CSS}">
</head>
<body>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.value
}

export function sendPlain(reply: FastifyReply, status: number, title: string, body: SafeHtml): FastifyReply {
  return noStore(reply, SCREEN_CSP).code(status).type('text/html; charset=utf-8').send(plainPage(title, body))
}

/** Post/redirect/get: 303 to a screen, with a flash code (flash.ts) in the query; never a secret. */
export function redirectTo(reply: FastifyReply, path: string, flash?: string): FastifyReply {
  const url = flash ? `${path}${path.includes('?') ? '&' : '?'}flash=${encodeURIComponent(flash)}` : path
  return noStore(reply, SCREEN_CSP).redirect(url, 303)
}
