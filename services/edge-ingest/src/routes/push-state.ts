import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { AccountRecord, ConnectionRecord } from '@lsv/shared/model/records.ts'
import type { PushAnswered } from '@lsv/shared/ports/listeners.ts'
import type { PayloadProblem, PushCredential } from '@lsv/shared/ports/push-log.ts'
import { payloadProblemOf } from '@lsv/shared/domain/ingest/payload-problem.ts'
import type { PartnerCrmCaller } from '@lsv/shared/domain/ingest/auth.ts'
import { StageDeadline } from '@lsv/shared/http/dependency-deadline.ts'
import type { PushAccepted } from '@lsv/shared/contract/push.ts'
import type { CheckedPush, queuePush } from '@lsv/shared/domain/ingest/accept.ts'

/**
 * What a push request learns on its way (the account, the caller, the connection its credential
 * names, what was queued), kept on the request itself (fastify's `decorateRequest`), and read
 * once, in the route's one onResponse, into the PushAnswered outcome its listeners get.
 */
export interface PushState {
  account: AccountRecord | null
  /** the connection the caller is authenticated for (the handler needs it) */
  connection: ConnectionRecord | null
  /** partner CRM: the location the presented token identified before the body (null: not identified) */
  identified: PartnerCrmCaller | null
  /** the connection the presented credential named, accepted or refused, and that credential */
  named: PushAnswered['connection']
  accepted: PushAnswered['accepted']
  error: string | null
  /** a 400 `invalid payload`: the field it was about (the inbound debugger shows it; the answer does not) */
  problem: PayloadProblem | null
  /** the after-body dependency stage, started by its first call (http/dependency-deadline.ts) */
  afterBody: StageDeadline | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /** the push routes' state (push-state.ts); null on any other route */
    pushState: PushState | null
  }
}

export function decoratePushRequests(app: App): void {
  app.decorateRequest('pushState', null)
}

/** The request's state, created on first use. */
export function stateOf(request: FastifyRequest): PushState {
  request.pushState ??= { account: null, connection: null, identified: null, named: null, accepted: null, error: null, problem: null, afterBody: null }
  return request.pushState
}

/** The request's after-body stage: one deadline for everything the handler awaits. */
export function afterBodyStage(request: FastifyRequest, deadlineMs: number): StageDeadline {
  const state = stateOf(request)
  state.afterBody ??= new StageDeadline(deadlineMs)
  return state.afterBody
}

/** Records which connection the credential named (the inbound debugger files the answer under it). */
export function nameConnection(request: FastifyRequest, connectionId: string, credential: PushCredential): void {
  stateOf(request).named = { id: connectionId, credential }
}

/** The `error` text of an error envelope as sent (bounded), or null. */
function errorTextOf(payload: string): string | null {
  try {
    const v = JSON.parse(payload) as { error?: unknown }
    return typeof v.error === 'string' ? v.error.slice(0, 300) : null
  } catch {
    return null
  }
}

/** onSend: the error text of a refusal whose connection is known, as the caller gets it (callback-style: no promise per push). */
export function keepErrorText(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const state = request.pushState
  if (state?.named && reply.statusCode >= 400 && typeof payload === 'string') state.error = errorTextOf(payload)
  done(null, payload)
}

/** onError: the field an `invalid payload` refusal was about (domain/ingest/payload-problem.ts), kept for the outcome. */
export async function keepProblem(request: FastifyRequest, _reply: FastifyReply, error: unknown): Promise<void> {
  const state = request.pushState
  if (state?.named) state.problem = payloadProblemOf(error)
}

/** The outcome of an answered push, or null when the request never named an account (nothing to tell). */
export function pushAnsweredOf(request: FastifyRequest, reply: FastifyReply): PushAnswered | null {
  const state = request.pushState
  if (!state?.account) return null
  return {
    requestId: request.id,
    headers: request.headers,
    status: reply.statusCode,
    accountId: state.account.id,
    connection: state.named,
    error: reply.statusCode >= 400 ? state.error : null,
    accepted: state.accepted,
    problem: state.problem,
  }
}

/** Queues the checked push and keeps what was queued for the outcome. */
export type Accept = (request: FastifyRequest, ctx: Parameters<typeof queuePush>[0], push: CheckedPush) => Promise<PushAccepted>
