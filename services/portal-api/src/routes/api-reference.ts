import type { FastifyReply, FastifyRequest } from 'fastify'
import apiReference, { type ApiReferenceConfiguration } from '@scalar/fastify-api-reference'
import type { App } from '@lsv/shared/http/base-app.ts'
import { apiReferenceScript, SCRIPT_PATH, sendApiReferenceScript } from './api-reference-script.ts'

/** Where the page lives (its script: api-reference-script.ts) */
const API_REFERENCE_PATH = '/docs'
const OPENAPI_URL = '/api/v1/openapi.json'

/**
 * Everything the page may load comes from this origin. Scalar injects its styles as `<style>`
 * elements at run time, hence `'unsafe-inline'` for styles only; scripts are same-origin files
 * (the page carries no inline script), so an injected script cannot run. Requests of the API
 * client ("try it") are limited to this origin as well. `blob:` serves downloads and previews of
 * responses the reader asked for.
 */
const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ')

/**
 * The Scalar configuration, read by its script from the page (no inline script): the committed
 * OpenAPI document of this portal, the system fonts instead of Scalar's font host, and none of
 * the features that call Scalar's services (telemetry, AI agent, MCP, developer tools).
 */
const CONFIGURATION: Partial<ApiReferenceConfiguration> = {
  url: OPENAPI_URL,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  _integration: 'fastify',
}

function escapeAttribute(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/**
 * The page: the configuration as a data block (`type="application/json"`, never executed) that
 * Scalar's script finds by its id, then the script itself, same-origin, named by its version.
 */
const apiReferenceHtml = (scriptUrl: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference</title>
  </head>
  <body>
    <script id="api-reference" type="application/json" data-url="${OPENAPI_URL}" data-configuration="${escapeAttribute(JSON.stringify(CONFIGURATION))}"></script>
    <script src="${scriptUrl}"></script>
  </body>
</html>
`

/**
 * `GET /docs`: an API reference page for the OpenAPI document (Scalar), assets served from the
 * installed package, no CDN. The plugin's routes are answered here instead: its page (a redirect
 * from `/docs` to `/docs/`, then HTML with an inline script) by the page above, so `/docs` answers
 * 200 directly under a CSP without `'unsafe-inline'` scripts; its script compressed and cached
 * under a versioned URL (api-reference-script.ts).
 */
export function registerApiReference(app: App): void {
  const sendPage = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('content-security-policy', API_REFERENCE_CSP)
    reply.header('x-content-type-options', 'nosniff')
    reply.header('referrer-policy', 'no-referrer')
    if (request.routeOptions.url === SCRIPT_PATH) return sendApiReferenceScript(request, reply)
    const { version } = await apiReferenceScript()
    return reply
      .code(200)
      .type('text/html; charset=utf-8')
      .send(apiReferenceHtml(`${SCRIPT_PATH}?v=${version}`))
  }
  app.register(apiReference, {
    routePrefix: API_REFERENCE_PATH,
    configuration: CONFIGURATION,
    hooks: { onRequest: sendPage },
    logLevel: 'warn',
  })
}
