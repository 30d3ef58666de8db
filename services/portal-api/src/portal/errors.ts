import type { FastifyReply, FastifyRequest } from 'fastify'
import { html, type SafeHtml } from './kit/html.ts'
import { sendPage } from './kit/page.ts'
import { sessionOf } from './session.ts'

/**
 * An error page inside the frame when the request has a session (the tenant keeps the
 * navigation), a plain page otherwise.
 */
export function sendFrameError(request: FastifyRequest, reply: FastifyReply, status: number, title: string, body: SafeHtml): FastifyReply {
  let account
  try {
    account = sessionOf(request).account
  } catch {
    return sendPage(reply, { status: status, title: title, body: body })
  }
  return sendPage(reply, { status: status, account, current: request.url, title: title, body: body })
}

/**
 * 404: what a missing id and another account's id both answer (rule 4), so a tenant cannot
 * tell them apart.
 */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendFrameError(request, reply, 404, 'Not found', html`<p>There is nothing here in this account.</p>`)
}
