import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../scripts/lib/free-port.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const SERVICES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher']

/**
 * Docker is not available here, so this lays out /app as the Dockerfile's runtime stage does
 * (node_modules, package.json, shared, services/<SERVICE>, main.mjs written by the Dockerfile's
 * own RUN line) and runs exactly the image's CMD in it: the service must answer /healthz and
 * drain on SIGTERM well within Cloud Run's 10 s.
 */
function entryPointFor(service: string): string {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  const m = dockerfile.match(/printf '([^']+)' "\$\{SERVICE\}" > \/app\/main\.mjs/)
  if (!m) throw new Error('Dockerfile no longer writes main.mjs with printf')
  return m[1]!.replace('%s', service).replace('\\n', '\n')
}

function cmdOf(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  const m = dockerfile.match(/^CMD (\[.*\])$/m)
  return JSON.parse(m![1]!) as string[]
}

/**
 * Production mode as Terraform configures it (Google backends, the internal routes' audiences and
 * identities), on this machine: LOCAL_WIRING points the backends at loopback. Nothing is called
 * before /healthz answers and SIGTERM drains, so the emulators are used when the test run has them
 * and otherwise a closed loopback port does.
 */
function productionEnv(): Record<string, string> {
  const closed = '127.0.0.1:9'
  return {
    NODE_ENV: 'production',
    LOCAL_WIRING: 'true',
    GOOGLE_CLOUD_PROJECT: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test',
    METADATA_SERVER_DETECTION: 'none',
    STORE_BACKEND: 'firestore',
    QUEUE_BACKEND: 'pubsub',
    TASKS_BACKEND: 'cloudtasks',
    SECRETS_BACKEND: 'secretmanager',
    FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST ?? closed,
    PUBSUB_EMULATOR_HOST: process.env.PUBSUB_EMULATOR_HOST ?? closed,
    CLOUD_TASKS_EMULATOR_HOST: closed,
    SECRET_MANAGER_EMULATOR_HOST: closed,
    PUSH_AUDIENCE: 'http://127.0.0.1:1',
    PUSH_SERVICE_ACCOUNT: 'pubsub-push@demo-lsv-test.iam.gserviceaccount.com',
    DISPATCHER_URL: 'http://127.0.0.1:1',
    TASKS_SERVICE_ACCOUNT: 'tasks-invoker@demo-lsv-test.iam.gserviceaccount.com',
    PORTAL_BASE_URL: 'http://localhost:1',
    EDGE_BASE_URL_TEMPLATE: 'http://{public_id}.edge.localhost:1',
  }
}

describe('image start command', () => {
  for (const service of SERVICES) {
    it(`starts ${service} with the image's CMD and drains on SIGTERM`, async () => {
      const app = mkdtempSync(join(tmpdir(), `lsv-image-${service}-`))
      const data = mkdtempSync(join(tmpdir(), 'lsv-image-data-'))
      try {
        symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'))
        symlinkSync(join(ROOT, 'package.json'), join(app, 'package.json'))
        symlinkSync(join(ROOT, 'shared'), join(app, 'shared'))
        mkdirSync(join(app, 'services'))
        symlinkSync(join(ROOT, 'services', service), join(app, 'services', service))
        writeFileSync(join(app, 'main.mjs'), entryPointFor(service))
        const [cmd, ...args] = cmdOf()
        expect(cmd).toBe('node')
        const port = await freePort()
        const child = spawn(process.execPath, args, {
          cwd: app,
          env: {
            PATH: process.env.PATH,
            ...productionEnv(),
            PORT: String(port),
            DATA_DIR: data,
            LOG_LEVEL: 'warn',
            OPERATOR_TOKEN: 'image-test-token',
            KEY_PEPPER: 'image-test-pepper',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let output = ''
        child.stdout.on('data', (d) => (output += d))
        child.stderr.on('data', (d) => (output += d))
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
        let healthy = false
        // a bound by time, not by tries: a service's first start imports every module, which took
        // over 10 s with two test files and a browser at work on 2 cores
        const until = Date.now() + 60_000
        while (Date.now() < until && !healthy && child.exitCode === null) {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/healthz`)
            healthy = res.status === 200
          } catch {
            await new Promise((r) => setTimeout(r, 100))
          }
        }
        expect(healthy, `service did not become healthy:\n${output}`).toBe(true)
        child.kill('SIGTERM')
        const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))])
        if (code === 'timeout') child.kill('SIGKILL')
        expect(code, output).toBe(0)
      } finally {
        rmSync(app, { recursive: true, force: true })
        rmSync(data, { recursive: true, force: true })
      }
    }, 30_000)
  }
})
