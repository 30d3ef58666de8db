import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * A request that no route serves (an unknown path, a known path with another method, `OPTIONS`,
 * or `HEAD` where no `GET` exists) gets its not-found answer in `onRequest`, before a byte of its
 * body is read. Left to fastify, such a request runs the not-found handler only after the body
 * was read and parsed, up to the app's body limit (8 MiB at the edge and the portal, 12 MiB at
 * the worker): a few such requests at once took an instance past Cloud Run's 1 GiB (issue 28,
 * item 4). A 404 has no route, so no route's own hooks could refuse it: the rule lives here, in
 * the server, and every path gets it.
 *
 * The answer is the scope's own not-found handler, unchanged (the API's JSON envelope, or the
 * portal's 404 page under /portal): only its timing moves. The unread body is then drained
 * within bounds by the base app's onSend (lingering-close.ts), so a client still sending gets
 * the answer.
 */
export function answerUnroutedAtOnce(app: FastifyInstance): void {
  // callback-style: every request of every service runs it, and an async hook costs a promise and a microtask turn more each
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (!request.is404) {
      done()
      return
    }
    // the not-found context's handler, bound to the scope that set it (fastify four-oh-four.js);
    // once the answer is sent the hook chain ends there: no later hook, no parsing
    Promise.resolve(request.routeOptions.handler.call(app, request, reply)).then(() => done(), done)
  })
}
