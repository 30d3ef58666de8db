/**
 * The local secret store behind the Secret Manager stand-in: one JSON file in the data folder
 * (mode 0600) with every version of every secret infra/ declares. The first version of each is
 * generated once, as the deployment's provisioning does (operator token, key pepper, link signing
 * key set); later versions come from the services (a signing key rotation) through the stand-in.
 * OPERATOR_TOKEN in start:cloud's environment overrides the latest operator token for this run
 * only, as it does for `npm start`.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'

interface SecretVersion {
  /** the payload, as UTF-8 text (every platform secret is text) */
  data: string
  createTime: string
}

export interface SecretStore {
  file: string
  has(secret: string): boolean
  /** versions are numbered from 1; null when absent */
  version(secret: string, version: 'latest' | number): { number: number; version: SecretVersion } | null
  addVersion(secret: string, data: string): number
}

function alphanumeric(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  // rejection sampling keeps every character equally likely
  let out = ''
  while (out.length < length) {
    for (const b of randomBytes(length)) if (b < 248 && out.length < length) out += alphabet[b % 62]
  }
  return out
}

/** First versions of the secrets the platform reads, in the shapes the code expects. */
const GENERATORS: Record<string, () => string> = {
  'operator-token': () => alphanumeric(48),
  'key-pepper': () => alphanumeric(64),
  // shared/src/domain/links/signing-keys.ts: {"current": kid, "keys": {kid: base64 of 32 bytes}}
  'link-signing-keys': () => {
    const kid = randomBytes(6).toString('base64url')
    return JSON.stringify({ current: kid, keys: { [kid]: randomBytes(32).toString('base64') } })
  },
  // shared/src/domain/operations/target.ts: a Standard Webhooks secret, as infra/secrets.tf writes it
  'operator-events-secret': () => `whsec_${randomBytes(24).toString('base64')}`,
  // infra/secrets.tf: the SMTP relay of alert emails, a placeholder until an operator sets it
  // (start:cloud sends alert emails to files: ALERT_EMAIL=file)
  'alert-smtp-url': () => 'smtp://unset.invalid:587',
}

/** Opens (or creates) the store and gives every declared secret a first version. */
export function openSecretStore(file: string, declared: string[], runOverrides: Record<string, string> = {}): SecretStore {
  const overrides = { ...runOverrides }
  let data: Record<string, SecretVersion[]> = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, SecretVersion[]>) : {}
  const save = () => {
    writeFileSync(`${file}.tmp`, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 })
    renameSync(`${file}.tmp`, file)
  }
  let changed = !existsSync(file)
  for (const secret of declared) {
    if (data[secret]?.length) continue
    const generate = GENERATORS[secret]
    if (!generate)
      throw new Error(
        `secret ${secret} is declared in infra/ but start:cloud does not know how to generate its first version (scripts/lib/cloud/secret-store.ts)`,
      )
    data = { ...data, [secret]: [{ data: generate(), createTime: new Date().toISOString() }] }
    changed = true
  }
  if (changed) save()
  for (const name of Object.keys(overrides)) {
    if (!declared.includes(name)) throw new Error(`override of secret ${name}: infra/ declares no such secret`)
  }
  return {
    file,
    has: (secret) => declared.includes(secret),
    version(secret, version) {
      const versions = data[secret]
      if (!versions?.length) return null
      if (version === 'latest') {
        const number = versions.length
        const override = overrides[secret]
        return { number, version: override === undefined ? versions[number - 1]! : { ...versions[number - 1]!, data: override } }
      }
      const v = versions[version - 1]
      return v ? { number: version, version: v } : null
    },
    addVersion(secret, value) {
      data = { ...data, [secret]: [...(data[secret] ?? []), { data: value, createTime: new Date().toISOString() }] }
      save()
      // a new version is newer than a run-time override
      delete overrides[secret]
      return data[secret]!.length
    },
  }
}
