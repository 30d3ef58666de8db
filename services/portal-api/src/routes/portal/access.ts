import type {} from '@fastify/swagger'
import type { FastifyReply, preParsingHookHandler } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { SignInQuery } from '@lsv/shared/contract/portal-access.ts'
import { SIGN_IN_PATH, previewPortalLink, redeemPortalLink } from '@lsv/shared/domain/portal/links.ts'
import { clearedSessionCookie, sessionCookieOf, sessionSetCookie } from '@lsv/shared/domain/portal/cookie.ts'
import { isSameOrigin, portalSessionOf, presentsApiKey } from '@lsv/shared/domain/portal/credential.ts'
import { endPortalSession } from '@lsv/shared/domain/portal/sessions.ts'
import { frameAncestorsOf } from '@lsv/shared/domain/tenants/frame-ancestors.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { HOME_PATH, redirectTo, sendPage, SIGN_OUT_PATH } from '../../portal/kit/page.ts'
import { forgetReturnPath, returnPathOf } from '../../portal/return-path.ts'
import { sendOverview } from '../../portal/overview/index.ts'
import { crossOriginPage, linkExpiredPage, signedOutPage, switchAccountPage } from './pages.ts'

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

  /**
   * The answer of a redeemed link (rule 1): the session cookie and a 303 to a portal page — the
   * page a signed-out GET asked for in this browser (issue 22, 9; return-path.ts checks it is a
   * same-origin /portal/ path), else the home. The remembered path is used once. An account
   * that may be framed gets the cookie a third-party frame can use (cookie.ts).
   */
  const startSession = (cookieHeader: string | undefined, reply: FastifyReply, started: { secret: string; account: AccountRecord }) => {
    const back = returnPathOf(base(), cookieHeader)
    const cookies = [
      sessionSetCookie(base(), started.secret, frameAncestorsOf(started.account).length > 0),
      ...(back === null ? [] : [forgetReturnPath(base())]),
    ]
    return redirectTo(reply.header('set-cookie', cookies), back ?? HOME_PATH)
  }

  // a link works once, before it expires (rules 1 and 2): 303 with the cookie, or the same 410
  // page for a used, expired, voided, unknown or malformed link (and no cookie). A browser that
  // is signed in already is asked first (issue 21, 8d): the page only reads the link, so it
  // stays unused until "Continue" posts it back below
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
      const current = await portalSessionOf(deps, request)
      if (current) {
        const target = await previewPortalLink(deps, token)
        if (!target) return sendPage(reply, { status: 410, ...linkExpiredPage() })
        // the token is a base64url string (previewPortalLink checked it): no escaping needed
        return sendPage(reply, { status: 200, ...switchAccountPage(current.account, target, `${SIGN_IN_PATH}?token=${token}`) })
      }
      const started = await redeemPortalLink(deps, token)
      if (!started) return sendPage(reply, { status: 410, ...linkExpiredPage() })
      return startSession(request.headers.cookie, reply, started)
    },
  )

  // "Continue" on the switch-account page: state-changing, so same-origin only (rule 5), like
  // sign-out; the form has no fields (the token is in the query, which every log line redacts),
  // so a body of any size is refused before it is read. The session this browser had ends: its
  // cookie is replaced, and a session nobody can present any more should not live on
  app.post(
    SIGN_IN_PATH,
    { attachValidation: true, schema: { hide: true, querystring: SignInQuery }, bodyLimit: 1024, preParsing: emptyBodyIsNoBody },
    async (request, reply) => {
      if (!isSameOrigin(base(), request.headers)) return sendPage(reply, { status: 403, ...crossOriginPage() })
      const token = request.validationError ? undefined : request.query.token
      const started = await redeemPortalLink(deps, token)
      if (!started) return sendPage(reply, { status: 410, ...linkExpiredPage() })
      await endPortalSession(deps, sessionCookieOf(base(), request.headers.cookie))
      return startSession(request.headers.cookie, reply, started)
    },
  )

  app.get(HOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const caller = await portalSessionOf(deps, request)
    // signed in: the overview, the landing page (setup checklist and health; portal/overview)
    if (caller) return sendOverview(deps, reply, caller.account)
    // a cookie that names no live session is removed (unless a key decided instead of it)
    if (!presentsApiKey(request.headers) && sessionCookieOf(base(), request.headers.cookie) !== null) {
      reply.header('set-cookie', clearedSessionCookie(base()))
    }
    return sendPage(reply, { status: 200, ...signedOutPage() })
  })

  // state-changing, so same-origin only (rule 5): a cross-site form cannot sign the tenant out
  // the form has no fields: a body of any size is refused before it is read (docs/architecture.md,
  // "Before the caller is known"), since the origin is checked only in the handler
  app.post(SIGN_OUT_PATH, { schema: { hide: true }, bodyLimit: 1024, preParsing: emptyBodyIsNoBody }, async (request, reply) => {
    if (!isSameOrigin(base(), request.headers)) return sendPage(reply, { status: 403, ...crossOriginPage() })
    // the cookie is removed with the attributes it was set with (an embeddable account's is partitioned)
    const ending = await portalSessionOf(deps, request)
    await endPortalSession(deps, sessionCookieOf(base(), request.headers.cookie))
    const embeddable = ending !== null && frameAncestorsOf(ending.account).length > 0
    return redirectTo(reply.header('set-cookie', clearedSessionCookie(base(), embeddable)), HOME_PATH)
  })
}
