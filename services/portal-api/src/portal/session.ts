import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isSameOrigin, portalSessionOf } from '@lsv/shared/domain/portal/credential.ts'
import type { PortalSession } from '@lsv/shared/domain/portal/sessions.ts'
import { html } from './kit/html.ts'
import { sendPage } from './kit/page.ts'
import { rememberReturnPath } from './return-path.ts'

/** Where a request without a live session is sent: the portal home says how to sign in. */
const SIGNED_OUT_PATH = '/portal/'

const sessions = new WeakMap<FastifyRequest, PortalSession>()

/**
 * The session of a request that passed `requirePortalSession` (every screen route does). Throws
 * when called from a route without it: a programming error, never a tenant's.
 */
export function sessionOf(request: FastifyRequest): PortalSession {
  const found = sessions.get(request)
  if (!found) throw new Error('sessionOf() on a route without requirePortalSession')
  return found
}

/**
 * Who did it, for the audit log: the portal session, named by the first 12 hex digits of the
 * SHA-256 its record is stored under (never the cookie value, which is the secret).
 */
export function actorOf(session: PortalSession): string {
  return `portal session ${session.session.hash.slice(0, 12)}`
}

/**
 * Every screen's guard (management-api.md, "Portal access"). A state-changing request that is
 * not same-origin (rule 5) is refused with a 403 page before anything else, whatever the cookie;
 * a request without a live session is sent to the portal home (303), which says to sign in with
 * a link — or, for a form post, answered 401 (a redirect would lose what was sent anyway).
 * A signed-out GET remembers its path (return-path.ts): the next sign-in lands on it (issue 22, 9).
 * The session found is kept for `sessionOf`; it sees only its account (rule 4), and every id in
 * a URL is looked up within that account by the domain functions, which answer another
 * account's id as a missing one (404).
 *
 * An `onRequest` hook: it runs before a byte of the body is read, so a caller without a live
 * session and a same-origin signal never makes the portal read, parse or validate a form
 * (docs/architecture.md, "Before the caller is known").
 */
export function requirePortalSession(deps: PlatformDeps): onRequestAsyncHookHandler {
  return async function requirePortalSessionHook(request: FastifyRequest, reply: FastifyReply) {
    const safe = request.method === 'GET' || request.method === 'HEAD'
    if (!safe && !isSameOrigin(deps.config.portalBaseUrl, request.headers)) {
      return sendPage(reply, {
        status: 403,
        title: 'Not allowed',
        body: html`
<p>This form can only be sent from the portal itself. Nothing was changed.</p>
<p><a href="${SIGNED_OUT_PATH}">Portal home</a></p>`,
      })
    }
    const session = await portalSessionOf(deps, request)
    if (!session) {
      if (safe) {
        const remember = request.method === 'GET' ? rememberReturnPath(deps.config.portalBaseUrl, request.url) : null
        if (remember) reply.header('set-cookie', remember)
        return sendPage(reply.header('location', SIGNED_OUT_PATH), { status: 303, title: 'Sign in', body: signInBody() })
      }
      return sendPage(reply, { status: 401, title: 'Sign in', body: signInBody() })
    }
    sessions.set(request, session)
  }
}

function signInBody() {
  return html`
<p>You are not signed in. Sign in through a sign-in link; ask your operator for a new one. Nothing was changed.</p>`
}
