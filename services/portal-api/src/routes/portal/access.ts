import type {} from '@fastify/swagger'
import type { preParsingHookHandler } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { SignInQuery } from '@lsv/shared/contract/portal-access.ts'
import { SIGN_IN_PATH, redeemPortalLink } from '@lsv/shared/domain/portal/links.ts'
import { clearedSessionCookie, sessionCookieOf, sessionSetCookie } from '@lsv/shared/domain/portal/cookie.ts'
import { isSameOrigin, portalSessionOf, presentsApiKey } from '@lsv/shared/domain/portal/credential.ts'
import { endPortalSession } from '@lsv/shared/domain/portal/sessions.ts'
import { noStore, sendPage } from './html.ts'
import { crossOriginPage, HOME_PATH, homePage, linkExpiredPage, SIGN_OUT_PATH, signedOutPage } from './pages.ts'

/**
 * A form post without fields has an empty body, which the JSON parser every route shares would
 * refuse (400 `invalid JSON body`): an empty body is no body.
 */
const emptyBodyIsNoBody: preParsingHookHandler = async (request, _reply, payload) => {
  const length = request.headers['content-length']
  if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) delete request.headers['content-type']
  return payload
}

/**
 * Sign-in, the landing page and sign-out (management-api.md, "Portal access"; docs/portal.md).
 * HTML for browsers, so not in the OpenAPI description. The sign-in link's token is in the query
 * (`token`), which the request log redacts.
 */
export function registerPortalAccessPages(app: App, deps: PlatformDeps): void {
  // (deps is read in handlers only: the OpenAPI generator registers routes with stand-in deps)
  const base = () => deps.config.portalBaseUrl

  // a link works once, before it expires (rules 1 and 2): 303 with the cookie, or the same 410
  // page for a used, expired, voided, unknown or malformed link (and no cookie)
  app.get(
    SIGN_IN_PATH,
    {
      // a HEAD (a link checker, a mail scanner) must not use up the link, nor receive the cookie
      exposeHeadRoute: false,
      attachValidation: true,
      schema: { hide: true, querystring: SignInQuery },
    },
    async (request, reply) => {
      const token = request.validationError ? undefined : request.query.token
      const started = await redeemPortalLink(deps, token)
      if (!started) return sendPage(reply, 410, ...linkExpiredPage())
      return noStore(reply).header('set-cookie', sessionSetCookie(base(), started.secret)).redirect(HOME_PATH, 303)
    },
  )

  app.get(HOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const caller = await portalSessionOf(deps, request)
    if (caller) return sendPage(reply, 200, ...homePage(caller.account))
    // a cookie that names no live session is removed (unless a key decided instead of it)
    if (!presentsApiKey(request.headers) && sessionCookieOf(base(), request.headers.cookie) !== null) {
      reply.header('set-cookie', clearedSessionCookie(base()))
    }
    return sendPage(reply, 200, ...signedOutPage())
  })

  // state-changing, so same-origin only (rule 5): a cross-site form cannot sign the tenant out
  app.post(SIGN_OUT_PATH, { schema: { hide: true }, preParsing: emptyBodyIsNoBody }, async (request, reply) => {
    if (!isSameOrigin(base(), request.headers)) return sendPage(reply, 403, ...crossOriginPage())
    await endPortalSession(deps, sessionCookieOf(base(), request.headers.cookie))
    return noStore(reply).header('set-cookie', clearedSessionCookie(base())).redirect(HOME_PATH, 303)
  })
}
