import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { forgetCachedSigningKeys, getSigningKeys, getVerificationKey, LINK_SIGNING_KEYS_SECRET, parseKeySet } from '@lsv/shared/domain/links/signing-keys.ts'
import { createSecretManagerStandIn, type SecretManagerStandIn } from '../../scripts/lib/cloud/secret-manager-stand-in.ts'
import { openSecretStore, type SecretStore } from '../../scripts/lib/cloud/secret-store.ts'
import { createTestDeps } from '../helpers/deps.ts'

/**
 * `npm run cli -- links rotate-signing-key` as an operator runs it (node scripts/cli.ts, its own
 * process): a new current key in link-signing-keys, every previous key kept, against the
 * file-backed secrets of the local stack and against Secret Manager (the real client library,
 * REST, to the start:cloud stand-in), where it adds a version and needs nothing but access and add.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

interface Run {
  code: number
  stdout: string
  stderr: string
  json: any
  metadataDetection: string | null | undefined
}

const REPORT_HOOK = fileURLToPath(new URL('./support/report-metadata-detection.ts', import.meta.url))
const reports = mkdtempSync(join(tmpdir(), 'lsv-cli-env-'))
afterAll(() => rmSync(reports, { recursive: true, force: true }))
let runs = 0

/**
 * The CLI in its own process with only what the operator sets: no NODE_ENV=test, no backends and
 * no METADATA_SERVER_DETECTION leaking in from the test runner (the CLI decides that one itself).
 * `metadataDetection` is the value the process ended with (support/report-metadata-detection.ts).
 */
function cli(args: string[], env: Record<string, string>): Promise<Run> {
  const report = join(reports, `run-${++runs}.json`)
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', REPORT_HOOK, 'scripts/cli.ts', ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', LSV_TEST_METADATA_REPORT: report, ...env },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
        let json: unknown = null
        try {
          json = JSON.parse(stdout)
        } catch {
          /* not JSON */
        }
        let metadataDetection: string | null | undefined
        try {
          metadataDetection = (JSON.parse(readFileSync(report, 'utf8')) as { METADATA_SERVER_DETECTION: string | null }).METADATA_SERVER_DETECTION
        } catch {
          /* the process wrote no report */
        }
        resolve({ code, stdout, stderr, json, metadataDetection })
      },
    )
  })
}

describe('links rotate-signing-key, file-backed secrets (the local stack)', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  beforeAll(async () => {
    deps = await createTestDeps()
  })
  afterAll(async () => {
    await deps?.cleanup()
  })

  it('adds a current key and keeps the one that signed earlier links; the services see it', async () => {
    const before = await getSigningKeys(deps)
    const oldKey = before.keys.get(before.current)!
    const run = await cli(['links', 'rotate-signing-key'], { DATA_DIR: deps.config.dataDir })
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    // no Google API in use: the metadata switch is left alone (metadata-detection.ts)
    expect(run.metadataDetection).toBeNull()
    expect(run.json).toEqual({
      secret: 'link-signing-keys',
      backend: 'embedded',
      rotated: expect.stringMatching(/^[A-Za-z0-9_-]{8}$/),
      current: run.json.rotated,
      keys: [before.current, run.json.rotated],
    })
    expect(run.stdout).not.toContain(oldKey.toString('base64'))
    forgetCachedSigningKeys(deps)
    expect((await getSigningKeys(deps)).current).toBe(run.json.rotated)
    expect(await getVerificationKey(deps, before.current)).toEqual(oldKey)

    const again = await cli(['links', 'rotate-signing-key'], { DATA_DIR: deps.config.dataDir })
    expect(again.json.keys).toEqual([before.current, run.json.rotated, again.json.rotated])
  })
})

describe('links rotate-signing-key, Secret Manager', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-cli-links-'))
  let store: SecretStore
  let standIn: SecretManagerStandIn
  let host: string
  const asked: string[] = []

  beforeAll(async () => {
    store = openSecretStore(join(dir, 'secrets.json'), ['operator-token', 'key-pepper', 'link-signing-keys'])
    // the operator's account may read and add versions: a rotation needs nothing more
    standIn = createSecretManagerStandIn({
      project: 'lsv-test',
      store,
      iam: {
        allows: (_account, permission) => {
          asked.push(permission)
          return ['secretmanager.versions.access', 'secretmanager.versions.add'].includes(permission)
        },
      },
    })
    const listener = await standIn.listenFor('operator@example.com')
    host = `127.0.0.1:${listener.port}`
  })
  afterAll(async () => {
    await standIn?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const env = () => ({ SECRETS_BACKEND: 'secretmanager', GOOGLE_CLOUD_PROJECT: 'lsv-test', SECRET_MANAGER_EMULATOR_HOST: host })

  it('adds a version of link-signing-keys with a new current key and every previous one', async () => {
    const first = parseKeySet(store.version(LINK_SIGNING_KEYS_SECRET, 'latest')!.version.data)
    const run = await cli(['links', 'rotate-signing-key'], env())
    // no MetadataLookupWarning: the only Google API in use is a stand-in, so the tool itself turned
    // metadata-server detection off before building its client (createSecretsAdapter)
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
    expect(run.metadataDetection).toBe('none')
    const latest = store.version(LINK_SIGNING_KEYS_SECRET, 'latest')!
    expect(latest.number).toBe(2)
    const set = parseKeySet(latest.version.data)
    expect(set.current).toBe(run.json.rotated)
    expect([...set.keys.keys()]).toEqual([first.current, run.json.rotated])
    expect(set.keys.get(first.current)).toEqual(first.keys.get(first.current))
    expect(run.json).toMatchObject({ backend: 'secretmanager', current: run.json.rotated, keys: [first.current, run.json.rotated] })
    expect(new Set(asked)).toEqual(new Set(['secretmanager.versions.access', 'secretmanager.versions.add']))
  })

  it('refuses to rotate on top of a broken key set: exit 1, no version added', async () => {
    store.addVersion(LINK_SIGNING_KEYS_SECRET, '{"current":"gone","keys":{}}')
    const versions = store.version(LINK_SIGNING_KEYS_SECRET, 'latest')!.number
    const run = await cli(['links', 'rotate-signing-key'], env())
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/current link signing key is missing/)
    expect(store.version(LINK_SIGNING_KEYS_SECRET, 'latest')!.number).toBe(versions)
  })

  it('usage and configuration errors: exit 2, naming what is wrong', async () => {
    const noProject = await cli(['links', 'rotate-signing-key'], { SECRETS_BACKEND: 'secretmanager' })
    expect(noProject.code).toBe(2)
    expect(noProject.stderr).toMatch(/GOOGLE_CLOUD_PROJECT is required/)
    const unknown = await cli(['links', 'rotate'], env())
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/unknown verb "rotate"; verbs: rotate-signing-key/)
    const help = await cli(['links', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/usage: npm run cli -- links rotate-signing-key/)
    expect((await cli(['--help'], {})).stdout).toMatch(/^\s+links\s+rotate the link signing key/m)
  })
})
