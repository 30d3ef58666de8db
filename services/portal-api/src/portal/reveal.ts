import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { sessionCookieOf } from '@lsv/shared/domain/portal/cookie.ts'
import { openReveal, storeReveal, type RevealReceipt, type RevealView } from '@lsv/shared/domain/portal/reveals.ts'
import { html, type SafeHtml } from './kit/html.ts'
import { redirectTo, sendPage } from './kit/page.ts'
import { sessionOf } from './session.ts'
import { secretOnce } from './kit/ui.ts'
import type { ScreenDeclaration } from './kit/screens.ts'

/** The one-time view of a secret (domain/portal/reveals.ts): `/portal/reveal/<random id>`. */
const REVEAL_PATH = '/portal/reveal'

const RevealParams = Type.Object({ revealId: Type.String({ maxLength: 64 }) })

/**
 * The answer of a form that made a secret: the secret is kept for one showing to this session,
 * and the answer is a redirect (303) to its reveal page, so reloading repeats neither the action
 * nor the showing (docs/portal.md, "Secrets are shown once").
 */
export async function redirectToReveal(deps: PlatformDeps, request: FastifyRequest, reply: FastifyReply, view: RevealView): Promise<FastifyReply> {
  // the screens' guard resolved the session from this very cookie (session.ts)
  const cookie = sessionCookieOf(deps.config.portalBaseUrl, request.headers.cookie)
  if (cookie === null) throw new Error('redirectToReveal() without the session cookie')
  const id = await storeReveal(deps, cookie, sessionOf(request), view)
  return redirectTo(reply, `${REVEAL_PATH}/${id}`)
}

/**
 * The reveal page: the secret the first time (and the record deleted as it is read), then, on
 * a reload, the back button or another session's visit, a 410 page saying it was shown once.
 * No caching (sendScreen's `Cache-Control: no-store`), so no copy stays in the browser's cache.
 * Showing is taking, so only a GET shows it.
 */
function registerRevealScreen(scope: App, deps: PlatformDeps): void {
  // GET only: fastify would answer HEAD with this handler, and a HEAD (a link checker, a preview)
  // would use up the secret unseen; a HEAD is answered as a path no route serves (404)
  scope.get(`${REVEAL_PATH}/:revealId`, { exposeHeadRoute: false, schema: { hide: true, params: RevealParams } }, async (request, reply) => {
    const session = sessionOf(request)
    const cookie = sessionCookieOf(deps.config.portalBaseUrl, request.headers.cookie)
    const { view, receipt } = await openReveal(deps, cookie, session, request.params.revealId)
    if (!view) {
      return sendPage(reply, {
        status: 410,
        account: session.account,
        current: receipt?.back.path ?? REVEAL_PATH,
        title: 'Shown once',
        body: shownOnceBody(receipt),
      })
    }
    return sendPage(reply, {
      status: 200,
      account: session.account,
      current: view.back.path,
      title: view.title,
      body: html`${secretOnce(view.label, view.secret, view.note)}
<p>This page shows it once: reloading it will not show it again.</p>
<p><a href="${view.back.path}">${view.back.text}</a></p>`,
    })
  })
}

/**
 * The page of a reveal seen already (reloaded, the back button, another session, expired): the
 * advice fits what was shown when the receipt says it (domain/portal/reveals.ts); without one
 * (another session, expired unseen, an unknown id) it reads as for a credential.
 */
function shownOnceBody(receipt: RevealReceipt | null): SafeHtml {
  const back = receipt ? html`<p><a href="${receipt.back.path}">${receipt.back.text}</a></p>` : null
  if (receipt?.kind === 'tracked_link') {
    return html`<p class="notice">This tracked link was shown once; if you lost it, make a new link from the contact's page. A link is never shown twice: this page, reloaded or opened again, has nothing to show.</p>
${back}`
  }
  return html`<p class="notice">This secret was shown once; rotate again if you lost it. Secrets are never shown twice: this page, reloaded or opened again, has nothing to show.</p>
${back ?? html`<p><a href="/portal/connections">Inbound connections</a> · <a href="/portal/webhooks">Webhooks</a></p>`}`
}

/** A secret shown once, reached from the screen that made it (no navigation entry). */
export const revealScreen: ScreenDeclaration = { path: REVEAL_PATH, register: registerRevealScreen }
