import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createEmbeddedSecrets } from '@lsv/shared/adapters/embedded/secrets.ts'
import { createSecretManagerSecrets, type SecretManagerApi } from '@lsv/shared/adapters/google/secret-manager-secrets.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { secretsConformance } from './suites/secrets.ts'

describe('secrets: embedded (files)', () => {
  secretsConformance(async () => {
    const dir = tempDataDir()
    return {
      secrets: createEmbeddedSecrets(dir.dir),
      async close() {
        dir.cleanup()
      },
    }
  })

  describe('embedded only', () => {
    const cleanups: Array<() => void> = []
    afterEach(() => {
      for (const c of cleanups.splice(0)) c()
    })
    const folder = () => {
      const dir = tempDataDir()
      cleanups.push(() => dir.cleanup())
      return dir.dir
    }

    it('stores every version in <dataDir>/secrets/<name>.json, mode 0600, without temp files left', async () => {
      const dir = folder()
      const secrets = createEmbeddedSecrets(dir)
      await secrets.addVersion('key-pepper', 'one')
      await secrets.addVersion('key-pepper', 'two')
      const file = join(dir, 'secrets', 'key-pepper.json')
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readdirSync(join(dir, 'secrets'))).toEqual(['key-pepper.json'])
      expect((await secrets.versions('key-pepper')).map((v) => [v.version, v.value])).toEqual([
        [1, 'one'],
        [2, 'two'],
      ])
      // another instance (another process) reads the same files
      expect(await createEmbeddedSecrets(dir).get('key-pepper')).toBe('two')
    })

    it('serializes concurrent rotations in one process: no version is lost', async () => {
      const secrets = createEmbeddedSecrets(folder())
      await Promise.all(['a', 'b', 'c', 'd'].map((v) => secrets.addVersion('link-signing-keys', v)))
      const versions = await secrets.versions('link-signing-keys')
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4])
      expect(versions.map((v) => v.value).sort()).toEqual(['a', 'b', 'c', 'd'])
    })

    it('refuses names that could leave the secrets folder', async () => {
      const secrets = createEmbeddedSecrets(folder())
      await expect(secrets.get('../platform')).rejects.toThrow(/invalid secret name/)
      await expect(secrets.addVersion('a/b', 'x')).rejects.toThrow(/invalid secret name/)
    })
  })
})

/**
 * A stand-in for SecretManagerServiceClient: an in-memory store that answers like the API
 * (NOT_FOUND for a missing secret or one without versions) and records every request.
 */
function fakeSecretManager(project: string) {
  const store = new Map<string, Buffer[]>()
  const calls: Array<{ method: string; request: unknown }> = []
  const notFound = () => Object.assign(new Error('5 NOT_FOUND'), { code: 5 })
  const idOf = (path: string) => path.slice(`projects/${project}/secrets/`.length).split('/')[0]!
  const client: SecretManagerApi = {
    async accessSecretVersion(request) {
      calls.push({ method: 'accessSecretVersion', request })
      const versions = store.get(idOf(request.name))
      if (!versions?.length) throw notFound()
      return [{ payload: { data: new Uint8Array(versions.at(-1)!) } }]
    },
    async addSecretVersion(request) {
      calls.push({ method: 'addSecretVersion', request })
      const versions = store.get(idOf(request.parent))
      if (!versions) throw notFound()
      versions.push(Buffer.from(request.payload.data))
      return [{}]
    },
    async createSecret(request) {
      calls.push({ method: 'createSecret', request })
      if (store.has(request.secretId)) throw Object.assign(new Error('6 ALREADY_EXISTS'), { code: 6 })
      store.set(request.secretId, [])
      return [{}]
    },
  }
  return { client, calls, store }
}

describe('secrets: Secret Manager (fake client)', () => {
  secretsConformance(async () => ({
    secrets: createSecretManagerSecrets(fakeSecretManager('lsv-test').client, 'lsv-test'),
    async close() {},
  }))

  it('reads the latest version by its resource name and decodes UTF-8', async () => {
    const fake = fakeSecretManager('lsv-prod')
    fake.store.set('key-pepper', [Buffer.from('old'), Buffer.from('pépper')])
    const secrets = createSecretManagerSecrets(fake.client, 'lsv-prod')
    expect(await secrets.get('key-pepper')).toBe('pépper')
    expect(fake.calls).toEqual([{ method: 'accessSecretVersion', request: { name: 'projects/lsv-prod/secrets/key-pepper/versions/latest' } }])
  })

  it('creates a missing secret with automatic replication, then adds the version', async () => {
    const fake = fakeSecretManager('lsv-prod')
    const secrets = createSecretManagerSecrets(fake.client, 'lsv-prod')
    await secrets.addVersion('operator-token', 'tok')
    expect(fake.calls).toEqual([
      { method: 'addSecretVersion', request: { parent: 'projects/lsv-prod/secrets/operator-token', payload: { data: Buffer.from('tok') } } },
      { method: 'createSecret', request: { parent: 'projects/lsv-prod', secretId: 'operator-token', secret: { replication: { automatic: {} } } } },
      { method: 'addSecretVersion', request: { parent: 'projects/lsv-prod/secrets/operator-token', payload: { data: Buffer.from('tok') } } },
    ])
    fake.calls.length = 0
    await secrets.addVersion('operator-token', 'tok2')
    expect(fake.calls.map((c) => c.method)).toEqual(['addSecretVersion'])
  })

  it('caches values (and absence) for the TTL; addVersion invalidates at once', async () => {
    const fake = fakeSecretManager('lsv-prod')
    fake.store.set('key-pepper', [Buffer.from('v1')])
    const clock = new ManualClock()
    const secrets = createSecretManagerSecrets(fake.client, 'lsv-prod', { clock, cacheTtlMs: 60_000 })
    const reads = () => fake.calls.filter((c) => c.method === 'accessSecretVersion').length

    expect(await secrets.get('key-pepper')).toBe('v1')
    expect(await secrets.get('key-pepper')).toBe('v1')
    expect(reads()).toBe(1)

    fake.store.get('key-pepper')!.push(Buffer.from('rotated-elsewhere'))
    clock.advance(59_999)
    expect(await secrets.get('key-pepper')).toBe('v1')
    clock.advance(1)
    expect(await secrets.get('key-pepper')).toBe('rotated-elsewhere')
    expect(reads()).toBe(2)

    expect(await secrets.get('missing')).toBeNull()
    expect(await secrets.get('missing')).toBeNull()
    expect(reads()).toBe(3)

    await secrets.addVersion('key-pepper', 'v3')
    expect(await secrets.get('key-pepper')).toBe('v3')
    expect(reads()).toBe(4)
  })

  it('rethrows errors other than NOT_FOUND', async () => {
    const client: SecretManagerApi = {
      accessSecretVersion: async () => {
        throw Object.assign(new Error('7 PERMISSION_DENIED'), { code: 7 })
      },
      addSecretVersion: async () => {
        throw Object.assign(new Error('14 UNAVAILABLE'), { code: 14 })
      },
      createSecret: async () => [{}],
    }
    const secrets = createSecretManagerSecrets(client, 'p')
    await expect(secrets.get('x')).rejects.toMatchObject({ code: 7 })
    await expect(secrets.addVersion('x', 'v')).rejects.toMatchObject({ code: 14 })
  })
})
