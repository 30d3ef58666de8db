import type { FastifyInstance, preParsingHookHandler } from 'fastify'

/** methods whose routes take a body only when their schema declares one */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS'])

/** Whether the request announces a body (a length above 0, or chunked). */
function announcesBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/**
 * The request is treated as one without a body: fastify's body step sees no content headers and
 * calls the handler at once. The raw request keeps them, so the base app's onSend still drains
 * the unread body within bounds after the answer (lingering-close.ts).
 */
const ignoreBody: preParsingHookHandler = async (request, _reply, payload) => {
  if (announcesBody(request.headers)) request.headers = { 'content-type': undefined, 'content-length': undefined, 'transfer-encoding': undefined }
  return payload
}

/**
 * No request reads a body before something has decided it needs one (issue 28, item 4). fastify
 * reads and parses the body of every method that may carry one, DELETE included, up to the body
 * limit (8 MiB at the portal) whether the route wants it or not: an authenticated `DELETE …/keys/{id}`
 * declaring 8 MiB was read whole and JSON-parsed before its handler ran. A DELETE (or OPTIONS)
 * route without a body schema takes no body, so its request is answered without reading it (GET
 * and HEAD never are). One `onRoute` hook of the base app, so every service's routes get it,
 * routes added later included; it runs in `preParsing`, after the route's own `onRequest` checks
 * (a refused caller is answered before this).
 */
export function ignoreBodiesOfBodylessRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!methods.every((m) => BODYLESS_METHODS.has(m.toUpperCase())) || route.schema?.body !== undefined) return
    const existing = route.preParsing
    route.preParsing = [ignoreBody, ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing])]
  })
}
