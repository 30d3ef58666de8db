import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { SecretName, Secrets } from '../../ports/secrets.ts'

/** One stored version of a secret. */
export interface SecretVersion {
  version: number
  value: string
  created_at: string
}

interface SecretFile {
  name: string
  versions: SecretVersion[]
}

export interface EmbeddedSecrets extends Secrets {
  /** every version of a secret, oldest first (ops, tests) */
  versions(name: SecretName): Promise<SecretVersion[]>
}

/** Secret Manager's own rule for secret ids; it also keeps names from escaping the folder. */
const SECRET_NAME = /^[A-Za-z0-9_-]{1,255}$/

function checkName(name: string): void {
  if (!SECRET_NAME.test(name)) throw new Error(`invalid secret name: ${JSON.stringify(name)}`)
}

/**
 * Secrets as files: `<dataDir>/secrets/<name>.json` holding every version, mode 0600. A write goes
 * to a temporary file that is fsynced and renamed over the old one, so a reader sees the old or
 * the new file, never half of one. Writes from several processes at once are not serialized
 * (last writer wins); local tooling rotates from one place.
 */
export function createEmbeddedSecrets(dataDir: string): EmbeddedSecrets {
  const folder = join(dataDir, 'secrets')
  const pathOf = (name: string) => join(folder, `${name}.json`)
  /** serializes this process's writes per secret */
  const writing = new Map<string, Promise<void>>()

  async function load(name: string): Promise<SecretFile | null> {
    checkName(name)
    try {
      return JSON.parse(await readFile(pathOf(name), 'utf8')) as SecretFile
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  async function writeAtomically(name: string, content: SecretFile): Promise<void> {
    await mkdir(folder, { recursive: true, mode: 0o700 })
    const tmp = join(folder, `.${name}.${randomBytes(6).toString('hex')}.tmp`)
    const handle = await open(tmp, 'wx', 0o600)
    try {
      await handle.writeFile(JSON.stringify(content, null, 2))
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await rename(tmp, pathOf(name))
    } catch (err) {
      await rm(tmp, { force: true })
      throw err
    }
  }

  return {
    async get(name) {
      const file = await load(name)
      return file?.versions.at(-1)?.value ?? null
    },

    async versions(name) {
      return (await load(name))?.versions ?? []
    },

    async addVersion(name, value) {
      checkName(name)
      const previous = writing.get(name) ?? Promise.resolve()
      const next = previous
        .catch(() => {})
        .then(async () => {
          const file = (await load(name)) ?? { name, versions: [] }
          const version = (file.versions.at(-1)?.version ?? 0) + 1
          file.versions.push({ version, value, created_at: new Date().toISOString() })
          await writeAtomically(name, file)
        })
      writing.set(name, next)
      await next
    },

    async close() {},
  }
}
