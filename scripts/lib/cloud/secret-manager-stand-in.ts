/**
 * A Secret Manager stand-in at the HTTP level (REST v1, what the client library's REST transport
 * sends): access a version, add a version, get or create a secret, backed by the local secret
 * store. Each service gets its own port, so every call is checked against the IAM grants infra/
 * declares for that service's account (secretAccessor to read, secretVersionAdder to add).
 */
import type { ServerResponse } from 'node:http'
import { listen, readJson, sendGoogleError, sendJson, type Listener } from './http.ts'
import type { Iam } from './iam.ts'
import type { SecretStore } from './secret-store.ts'

export interface SecretManagerStandIn {
  /** a listener whose callers act as `account`; its host:port is that service's SECRET_MANAGER_EMULATOR_HOST */
  listenFor(account: string): Promise<Listener>
  close(): Promise<void>
}

export function createSecretManagerStandIn(options: {
  project: string
  store: SecretStore
  iam: Iam
  log?: (line: Record<string, unknown>) => void
}): SecretManagerStandIn {
  const { project, store, iam } = options
  const listeners: Listener[] = []
  const denied = (res: ServerResponse, account: string, permission: string, resource: string) => {
    options.log?.({ denied: permission, resource, account })
    sendGoogleError(
      res,
      'PERMISSION_DENIED',
      `Permission '${permission}' denied for resource '${resource}' (or it may not exist) [caller ${account}; start:cloud checks the IAM grants in infra/]`,
    )
  }

  const handle = (account: string) => async (req: import('node:http').IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const path = decodeURIComponent(url.pathname)
    let m: RegExpExecArray | null
    if ((m = /^\/v1\/projects\/([^/]+)\/secrets\/([^/:]+)\/versions\/([^/:]+):access$/.exec(path)) && req.method === 'GET') {
      const [, p, secret, v] = m as unknown as [string, string, string, string]
      const resource = `projects/${p}/secrets/${secret}/versions/${v}`
      if (p !== project || !iam.allows(account, 'secretmanager.versions.access', `secret:${secret}`))
        return denied(res, account, 'secretmanager.versions.access', resource)
      if (!store.has(secret)) return sendGoogleError(res, 'NOT_FOUND', `Secret [${resource}] not found.`)
      const found = store.version(secret, v === 'latest' ? 'latest' : Number(v))
      if (!found) return sendGoogleError(res, 'NOT_FOUND', `Secret Version [${resource}] not found.`)
      options.log?.({ access: secret, version: found.number, account })
      return sendJson(res, 200, {
        name: `projects/${p}/secrets/${secret}/versions/${found.number}`,
        payload: { data: Buffer.from(found.version.data, 'utf8').toString('base64') },
      })
    }
    if ((m = /^\/v1\/projects\/([^/]+)\/secrets\/([^/:]+):addVersion$/.exec(path)) && req.method === 'POST') {
      const [, p, secret] = m as unknown as [string, string, string]
      const resource = `projects/${p}/secrets/${secret}`
      if (p !== project || !iam.allows(account, 'secretmanager.versions.add', `secret:${secret}`))
        return denied(res, account, 'secretmanager.versions.add', resource)
      if (!store.has(secret)) return sendGoogleError(res, 'NOT_FOUND', `Secret [${resource}] not found.`)
      const body = await readJson(req)
      const data = (body.payload as { data?: string } | undefined)?.data
      if (typeof data !== 'string') return sendGoogleError(res, 'INVALID_ARGUMENT', 'payload.data is required')
      const number = store.addVersion(secret, Buffer.from(data, 'base64').toString('utf8'))
      options.log?.({ addVersion: secret, version: number, account })
      return sendJson(res, 200, { name: `${resource}/versions/${number}`, createTime: new Date().toISOString(), state: 'ENABLED' })
    }
    if ((m = /^\/v1\/projects\/([^/]+)\/secrets\/([^/:]+)$/.exec(path)) && req.method === 'GET') {
      const [, p, secret] = m as unknown as [string, string, string]
      const resource = `projects/${p}/secrets/${secret}`
      if (p !== project || !iam.allows(account, 'secretmanager.secrets.get', `secret:${secret}`))
        return denied(res, account, 'secretmanager.secrets.get', resource)
      if (!store.has(secret)) return sendGoogleError(res, 'NOT_FOUND', `Secret [${resource}] not found.`)
      return sendJson(res, 200, { name: resource, replication: { automatic: {} } })
    }
    if ((m = /^\/v1\/projects\/([^/]+)\/secrets$/.exec(path)) && req.method === 'POST') {
      const [, p] = m as unknown as [string, string]
      const secret = url.searchParams.get('secretId') ?? ''
      // secrets are Terraform's: creating one needs secretmanager.secrets.create on the project
      if (p !== project || !iam.allows(account, 'secretmanager.secrets.create', 'project'))
        return denied(res, account, 'secretmanager.secrets.create', `projects/${p}`)
      if (store.has(secret)) return sendGoogleError(res, 'ALREADY_EXISTS', `Secret [projects/${p}/secrets/${secret}] already exists.`)
      return sendGoogleError(res, 'FAILED_PRECONDITION', `start:cloud serves only the secrets infra/ declares; ${secret} is not one`)
    }
    sendGoogleError(res, 'NOT_FOUND', `start:cloud's Secret Manager stand-in does not implement ${req.method} ${path}`)
  }

  return {
    async listenFor(account) {
      const l = await listen(handle(account))
      listeners.push(l)
      return l
    },
    close: async () => {
      await Promise.all(listeners.map((l) => l.close()))
    },
  }
}
