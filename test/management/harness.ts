import type { App } from '@lsv/shared/http/base-app.ts'
import type { LightMyRequestResponse } from 'fastify'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'

export const OPERATOR_TOKEN = TEST_OPERATOR_TOKEN
export const OPERATOR = { authorization: `Bearer ${OPERATOR_TOKEN}` }
export const ADMIN = '/api/v1/admin/accounts'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** One management call with the operator token; `payload` undefined sends no body at all. */
export function call(app: App, method: Method, url: string, payload?: unknown, headers: Record<string, string> = OPERATOR): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
}

/** A call that must succeed with `status`; returns the JSON body (null for 204). */
export async function ok<T = Record<string, any>>(app: App, status: number, method: Method, url: string, payload?: unknown): Promise<T> {
  const res = await call(app, method, url, payload)
  if (res.statusCode !== status) throw new Error(`${method} ${url} -> ${res.statusCode} (expected ${status}) ${res.body}`)
  return (res.body === '' ? null : res.json()) as T
}

/** The error envelope of a failed call, with its status. */
export async function fails(app: App, method: Method, url: string, payload?: unknown, headers?: Record<string, string>) {
  const res = await call(app, method, url, payload, headers)
  return { status: res.statusCode, body: res.json() as { ok: false; error: string; issues?: Array<{ code: string; message: string; path: string }> } }
}
