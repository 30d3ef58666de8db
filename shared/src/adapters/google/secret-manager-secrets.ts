import type { Clock } from '../../model/clock.ts'
import { systemClock } from '../../model/clock.ts'
import type { SecretName, Secrets } from '../../ports/secrets.ts'
import { ALREADY_EXISTS, codeOf, NOT_FOUND } from './grpc-codes.ts'

/** The part of `SecretManagerServiceClient` (@google-cloud/secret-manager) this adapter calls; tests pass a fake. */
export interface SecretManagerApi {
  accessSecretVersion(request: { name: string }): Promise<[{ payload?: { data?: Uint8Array | string | null } | null }, ...unknown[]]>
  addSecretVersion(request: { parent: string; payload: { data: Buffer } }): Promise<unknown>
  createSecret(request: { parent: string; secretId: string; secret: { replication: { automatic: Record<string, never> } } }): Promise<unknown>
}

export interface SecretManagerOptions {
  /** how long a read value is reused before asking the API again (default 60 s) */
  cacheTtlMs?: number
  clock?: Clock
}

/**
 * Secrets in Google Secret Manager; `get` reads the `latest` version. With
 * SECRET_MANAGER_EMULATOR_HOST the real client speaks REST over HTTP to a local stand-in
 * (adapters/google/stand-in-client.ts; requests checked in test/deploy/google-rest-adapters.test.ts). Values are cached in
 * process for a minute so hot paths (key pepper, link signing keys) do not call the API per
 * request; a rotation elsewhere is seen within that minute, one made here at once.
 */
export function createSecretManagerSecrets(client: SecretManagerApi, project: string, options: SecretManagerOptions = {}): Secrets {
  const ttl = options.cacheTtlMs ?? 60_000
  const clock = options.clock ?? systemClock
  const cache = new Map<string, { value: string | null; until: number }>()
  const secretPath = (name: string) => `projects/${project}/secrets/${name}`

  async function read(name: string): Promise<string | null> {
    try {
      const [version] = await client.accessSecretVersion({ name: `${secretPath(name)}/versions/latest` })
      const data = version.payload?.data
      if (data === undefined || data === null) return ''
      return typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')
    } catch (err) {
      if (codeOf(err) === NOT_FOUND) return null
      throw err
    }
  }

  return {
    async get(name: SecretName) {
      const hit = cache.get(name)
      if (hit && hit.until > clock.now()) return hit.value
      const value = await read(name)
      cache.set(name, { value, until: clock.now() + ttl })
      return value
    },

    async addVersion(name: SecretName, value: string) {
      const request = { parent: secretPath(name), payload: { data: Buffer.from(value, 'utf8') } }
      cache.delete(name)
      try {
        await client.addSecretVersion(request)
      } catch (err) {
        if (codeOf(err) !== NOT_FOUND) throw err
        try {
          await client.createSecret({ parent: `projects/${project}`, secretId: name, secret: { replication: { automatic: {} } } })
        } catch (createErr) {
          if (codeOf(createErr) !== ALREADY_EXISTS) throw createErr
        }
        await client.addSecretVersion(request)
      } finally {
        cache.delete(name)
      }
    },

    async close() {},
  }
}
