import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { sendPage } from '../kit/page.ts'
import { questionView, type Question } from '../kit/confirm.ts'
import { sessionOf } from '../session.ts'
import { WEBHOOKS_PATH } from './paths.ts'

/**
 * The confirmation step of a destructive webhook action (kit/confirm.ts): the action's first
 * form (or a link) leads with a 303 to a GET page that asks; only its confirmed post acts (and
 * answers 303). A reload of the question asks again: it never acts by itself.
 */
export interface Confirmation extends Question {
  title: string
}

/** Answers the confirmation page for this request's account. */
export function sendConfirmation(request: FastifyRequest, reply: FastifyReply, c: Confirmation): FastifyReply {
  const { account }: { account: AccountRecord } = sessionOf(request)
  return sendPage(reply, { status: 200, account, current: WEBHOOKS_PATH, flash: null, title: c.title, body: questionView(c) })
}
