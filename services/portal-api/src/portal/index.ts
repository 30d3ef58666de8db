import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { html } from './kit/html.ts'
import { registerPortalAssets } from './assets.ts'
import { registerFormParser } from './kit/forms.ts'
import { requirePortalSession } from './session.ts'
import { loadEndpointBanner } from './endpoint-banner.ts'
import { notFound, sendFrameError } from './errors.ts'
import { connectionsScreen } from './connections/index.ts'
import { settingsScreen } from './settings/index.ts'
import { auditScreen } from './audit/index.ts'
import { webhooksScreen } from './screens-webhooks/index.ts'
import { contactsScreen } from './screens-contacts/index.ts'
import { activityScreen } from './screens-activity/index.ts'
import { overviewScreen } from './overview/index.ts'
import { registerPortalNotFound } from './not-found.ts'
import { revealScreen } from './reveal.ts'
import { registerLogoImage } from './settings/logo-image.ts'
import { catalogueOf, type ScreenDeclaration } from './kit/screens.ts'

/**
 * Every screen, declared once, in the order of the navigation: the routes, the navigation and the
 * flash codes are derived from this list (kit/screens.ts). A new screen is one line here.
 */
const SCREENS: readonly ScreenDeclaration[] = [
  overviewScreen,
  connectionsScreen,
  webhooksScreen,
  contactsScreen,
  settingsScreen,
  activityScreen,
  auditScreen,
  revealScreen,
]

/**
 * The portal's screens (docs/portal.md), in their own scope: HTML form bodies are parsed here
 * only, every route requires a live session of the account it shows (session.ts), and errors
 * answer as pages, not as the JSON envelope. Hidden from the OpenAPI description (each route
 * says `hide: true`).
 */
export function registerPortalScreens(app: App, deps: PlatformDeps): void {
  // the page function (kit/page.ts) reads the navigation and the flash texts from here
  app.decorate('portalScreens', catalogueOf(SCREENS))
  app.decorate('portalNow', () => deps.clock.now())
  registerPortalAssets(app)
  // the account's logo: behind the session, but outside the screens' scope (settings/logo-image.ts)
  registerLogoImage(app, deps)
  // an unknown /portal/* path: a 404 page, not the API's JSON (not-found.ts)
  registerPortalNotFound(app, deps)
  app.register(async (scope: App) => {
    // the session (and, for a post, the same-origin signal) is checked before a byte of the body
    // is read; only then is a form parsed, within its route's small limit (forms.ts)
    scope.addHook('onRequest', requirePortalSession(deps))
    registerFormParser(scope)
    // a disabled or failing webhook is named on every screen of the account
    scope.addHook('preHandler', loadEndpointBanner(deps))
    scope.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (isAppError(error) && error.status === 404) return notFound(request, reply)
      // a path parameter that is not valid (a contact id that is not a UUID) names no page: the
      // 404 page, as for an id no contact has, not the form's "not understood"
      if (error.validation && error.validationContext === 'params') return notFound(request, reply)
      // an edited or cut-short address of a page (a query value no link of the portal makes): a
      // page in words with the way back, never the schema's text (a screen that can do better,
      // like the delivery log's filters, checks its own values and answers on its own page)
      if (error.validation && error.validationContext === 'querystring' && (request.method === 'GET' || request.method === 'HEAD')) {
        return badAddress(request, reply, error.validation)
      }
      if (error.validation || (isAppError(error) && error.status === 400)) {
        // the message names at most MAX_ISSUES problems (http/validation.ts), so the page stays small
        return sendFrameError(
          request,
          reply,
          400,
          'Not understood',
          html`<p>The form was not complete or not valid: ${error.message}. Nothing was changed.</p>`,
        )
      }
      if (error.statusCode === 415) {
        return sendFrameError(request, reply, 415, 'Not a form', html`<p>Only the portal's own forms can be sent here. Nothing was changed.</p>`)
      }
      if (error.statusCode === 413) return sendFrameError(request, reply, 413, 'Too large', html`<p>What was sent is too large. Nothing was changed.</p>`)
      request.log.error({ err: error }, 'portal screen failed')
      return sendFrameError(
        request,
        reply,
        500,
        'Something went wrong',
        html`<p>The portal could not complete this. Try again; if it persists, tell your operator.</p>`,
      )
    })
    for (const screen of SCREENS) screen.register?.(scope, deps)
  })
}

/**
 * The answer to a page's address whose query the route's schema refuses (`?status=bogus`, a value
 * past its length): 400, which values were not understood (their names, never the schema's text),
 * and the way back: the page without its query when that is a page (its query schema requires
 * nothing), else the screen the page belongs to.
 */
function badAddress(request: FastifyRequest, reply: FastifyReply, issues: readonly FastifySchemaValidationError[]): FastifyReply {
  const names = [
    ...new Set(
      issues.map((i) => {
        const missing = i.keyword === 'required' ? i.params.missingProperty : undefined
        return typeof missing === 'string' ? missing.replace(/^\./, '') : (i.instancePath.split('/')[1] ?? '')
      }),
    ),
  ].filter((n) => n !== '')
  const path = request.url.split('?')[0] ?? '/portal/'
  const schema = request.routeOptions.schema?.querystring as { required?: readonly string[] } | undefined
  const back = (schema?.required?.length ?? 0) === 0 ? { path, text: 'Open this page without what was edited' } : screenBackOf(path)
  return sendFrameError(
    request,
    reply,
    400,
    'Address not understood',
    html`<p>This page's address was edited or cut short, so the portal cannot show what it asks for${names.length === 0 ? '' : html`: ${names.map((n, k) => html`${k === 0 ? '' : ', '}<code>${n}</code>`)} ${names.length === 1 ? 'is not a value' : 'are not values'} this page offers`}. Nothing was changed.</p>
<p><a href="${back.path}">${back.text}</a></p>`,
  )
}

/** The screen a path belongs to (the contact pages are the Contacts screen's), as a link back. */
function screenBackOf(path: string): { path: string; text: string } {
  const owner = path.startsWith('/contacts/')
    ? contactsScreen
    : SCREENS.filter((s) => s.nav !== undefined && path.startsWith(s.path)).sort((a, b) => b.path.length - a.path.length)[0]
  return owner?.nav === undefined ? { path: '/portal/', text: 'Back to the overview' } : { path: owner.path, text: `Back to ${owner.nav}` }
}
