import { createHash } from 'node:crypto'
import type { FastifyReply } from 'fastify'

/**
 * Server-rendered HTML for the portal pages: escaping by construction and the response headers
 * every page carries. No script at all (yet); the one stylesheet is inline and allowed by its
 * hash, so the Content-Security-Policy allows nothing else: no other style, no script, no frame
 * ancestor, forms only to this origin.
 */

/** Markup that is already safe (built by `html`). */
export class SafeHtml {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

type Interpolated = string | number | SafeHtml | readonly Interpolated[] | null | undefined | false

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** Tagged template: every interpolated value is escaped unless it is SafeHtml (or a list of them). */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  let out = strings[0]!
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!
  })
  return new SafeHtml(out)
}

const STYLE = [
  ':root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}',
  'body{margin:0;padding:1rem}',
  'main{max-width:40rem;margin:0 auto}',
  'button{font:inherit;padding:.4rem 1rem;cursor:pointer}',
  ':focus-visible{outline:3px solid #1a73e8;outline-offset:2px}',
].join('')

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'`

const CONTENT_SECURITY_POLICY = ["default-src 'none'", `style-src ${STYLE_HASH}`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"].join('; ')

/** A whole page. */
function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value
}

/**
 * Sends a page with the headers every portal page carries: the CSP above, no caching (a page
 * shows one tenant's data), no referrer (a sign-in URL carries its token), no MIME sniffing,
 * and no framing for browsers that predate `frame-ancestors`.
 */
export function sendPage(reply: FastifyReply, status: number, title: string, body: SafeHtml): FastifyReply {
  return noStore(reply).code(status).type('text/html; charset=utf-8').send(page(title, body))
}

/**
 * The headers of every portal answer, pages and redirects alike. The screens (src/portal) pass
 * their own policy: they load one stylesheet and one script from this origin instead, and, for an
 * account that may be embedded, `frameable` (its policy's `frame-ancestors` then names the sites).
 */
export function noStore(reply: FastifyReply, csp: string = CONTENT_SECURITY_POLICY, options: { frameable?: boolean } = {}): FastifyReply {
  return reply.headers({
    'content-security-policy': csp,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    ...(options.frameable ? {} : { 'x-frame-options': 'DENY' }),
  })
}
