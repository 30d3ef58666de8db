import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { portalSessionOf } from '@lsv/shared/domain/portal/credential.ts'
import { html } from './kit/html.ts'
import { sendPage } from './kit/page.ts'

const PORTAL_PREFIX = '/portal'
const HOME = '/portal/'

/**
 * An unknown `/portal/*` path (a mistyped or stale link) answers a 404 page, not the API's JSON
 * envelope (issue 22, 3): in the frame with the navigation for a live session, a plain page that
 * says how to sign in otherwise. Only this prefix: every other path, the API's included, keeps
 * the JSON 404 of shared/src/http/error-handler.ts. Fastify gives each prefix its own not-found
 * handler, hence a scope of its own; it has no route, so nothing else changes under /portal.
 */
export function registerPortalNotFound(app: App, deps: PlatformDeps): void {
  app.register(
    async (scope: App) => {
      const answer = async (request: FastifyRequest, reply: FastifyReply) => {
        const session = await portalSessionOf(deps, request)
        if (session) {
          // current '' marks no navigation entry: the page is none of them
          return sendPage(reply, {
            status: 404,
            account: session.account,
            current: '',
            title: 'Page not found',
            body: html`<p>There is no portal page at this address. The link may be mistyped or out of date.</p>
<p><a href="${HOME}">Go to the portal home</a>, or choose a screen above.</p>`,
          })
        }
        return sendPage(reply, {
          status: 404,
          title: 'Page not found',
          body: html`<p>There is no portal page at this address. The link may be mistyped or out of date.</p>
<p>To use the portal, sign in with a sign-in link; ask your operator for a new one. <a href="${HOME}">Portal home</a></p>`,
        })
      }
      // answered in onRequest, before a byte of a body is read: a form post to a missing page is
      // the same page, never parsed (and never the API's JSON 400/415 for a form body). This scope
      // has no route, so the hook runs for its not-found answers only.
      scope.addHook('onRequest', answer)
      scope.setNotFoundHandler(answer)
    },
    { prefix: PORTAL_PREFIX },
  )
}
