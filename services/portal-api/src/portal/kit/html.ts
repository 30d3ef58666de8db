import type { FastifyReply } from 'fastify'

/**
 * Server-rendered HTML for the portal: escaping by construction, and the response headers every
 * portal answer carries (page.ts builds the one page skeleton and its policy on top of these).
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

/**
 * The headers of every portal answer, pages and redirects alike: the page's policy (page.ts), no
 * caching (a page shows one tenant's data), no referrer (a sign-in URL carries its token), no MIME
 * sniffing, and no framing for browsers that predate `frame-ancestors` unless the account may be
 * embedded (`frameable`: its policy's `frame-ancestors` then names the sites).
 */
export function noStore(reply: FastifyReply, csp: string, options: { frameable?: boolean } = {}): FastifyReply {
  return reply.headers({
    'content-security-policy': csp,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    ...(options.frameable ? {} : { 'x-frame-options': 'DENY' }),
  })
}
