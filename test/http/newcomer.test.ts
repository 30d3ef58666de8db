import { describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { skipMetadataServerForStandIns } from '@lsv/shared/platform/metadata-detection.ts'
import { emulators } from '../helpers/embedded.ts'

/**
 * A newcomer's first screen (item 18): `npm install` on the machine's own Node and npm prints no
 * wall of EBADENGINE warnings (the committed .npmrc), and a local tool talking to the emulators
 * prints no MetadataLookupWarning (platform/metadata-detection.ts). Nothing here leaves the
 * machine: npm runs --offline, the tool talks to the Firestore emulator on loopback.
 */
const ROOT = join(import.meta.dirname, '..', '..')

/** the environment a newcomer's shell has: no npm_* variables from the npm running this test, no node_modules/.bin on PATH */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && !['METADATA_SERVER_DETECTION', 'NODE_ENV'].includes(k)) env[k] = v
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes('node_modules'))
    .join(delimiter)
  return { ...env, ...extra }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) if (existsSync(join(dir, name))) return join(dir, name)
  return null
}

describe("a newcomer's first screen", () => {
  const env = shellEnv()
  const npm = onPath('npm', env)
  const machineNode = onPath('node', env)

  it.skipIf(npm === null)(
    "npm install with the machine's npm and Node prints no warnings",
    () => {
      const run = (...args: string[]) =>
        spawnSync(npm!, ['install', '--dry-run', '--offline', '--no-audit', '--no-fund', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 240_000 })
      const clean = run()
      const output = `${clean.stdout}${clean.stderr}`
      expect(clean.status, output).toBe(0)
      expect(output).not.toMatch(/EBADENGINE/)
      expect(output).not.toMatch(/npm warn/i)

      // what the setting hides is real on an old Node: asked for, the warnings are there
      const major = machineNode ? Number(spawnSync(machineNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim()) : 24
      if (major < 22) {
        const verbose = run('--loglevel=warn')
        expect(`${verbose.stdout}${verbose.stderr}`).toMatch(/EBADENGINE/)
      }
    },
    300_000,
  )

  it.skipIf(!emulators.firestore)(
    'a local tool on the emulators prints no MetadataLookupWarning',
    () => {
      // the operator CLI's export of every account, from the Firestore emulator
      const cli = spawnSync(process.execPath, [join(ROOT, 'scripts', 'cli.ts'), 'export', '--all', '--out', '/dev/null'], {
        cwd: ROOT,
        env: shellEnv({
          STORE_BACKEND: 'firestore',
          GOOGLE_CLOUD_PROJECT: emulators.project,
          FIRESTORE_EMULATOR_HOST: emulators.firestore!,
          NODE_ENV: 'development',
        }),
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(cli.status, cli.stderr).toBe(0)
      expect(cli.stderr).not.toMatch(/MetadataLookupWarning/)
    },
    150_000,
  )

  it('METADATA_SERVER_DETECTION=none only when every Google API in use is a stand-in, and never over an explicit value', () => {
    const base = { NODE_ENV: 'test', OPERATOR_TOKEN: 'x', KEY_PEPPER: 'x' }
    const standIns = loadConfig({
      ...base,
      STORE_BACKEND: 'firestore',
      QUEUE_BACKEND: 'pubsub',
      GOOGLE_CLOUD_PROJECT: 'demo-x',
      FIRESTORE_EMULATOR_HOST: '127.0.0.1:1',
      PUBSUB_EMULATOR_HOST: '127.0.0.1:2',
    })
    const e1: Record<string, string | undefined> = {}
    skipMetadataServerForStandIns(standIns, e1)
    expect(e1.METADATA_SERVER_DETECTION).toBe('none')

    const realPubSub = loadConfig({
      ...base,
      STORE_BACKEND: 'firestore',
      QUEUE_BACKEND: 'pubsub',
      GOOGLE_CLOUD_PROJECT: 'demo-x',
      FIRESTORE_EMULATOR_HOST: '127.0.0.1:1',
    })
    const e2: Record<string, string | undefined> = {}
    skipMetadataServerForStandIns(realPubSub, e2)
    expect(e2.METADATA_SERVER_DETECTION).toBeUndefined()

    const embedded = loadConfig({ ...base })
    const e3: Record<string, string | undefined> = {}
    skipMetadataServerForStandIns(embedded, e3)
    expect(e3.METADATA_SERVER_DETECTION).toBeUndefined()

    const e4: Record<string, string | undefined> = { METADATA_SERVER_DETECTION: 'assume-present' }
    skipMetadataServerForStandIns(standIns, e4)
    expect(e4.METADATA_SERVER_DETECTION).toBe('assume-present')
  })
})
