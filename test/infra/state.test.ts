import { beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { CHECK_ROOT, INFRA_DIR, loadTerraform, resources, type Terraform } from './hcl.ts'

/** Secrets out of Terraform state, state out of the repository and the build upload, providers pinned. */
let tf: Terraform
beforeAll(async () => {
  tf = await loadTerraform()
})

type Body = Record<string, unknown>

describe('no secret value in Terraform state or plan', () => {
  it('no managed resource generates a value (random_* resources keep their result in state)', () => {
    const generators = resources(tf)
      .map(([a]) => a)
      .filter((a) => /^random_/.test(a))
    expect(generators).toEqual([])
  })

  it('every secret version is written from ephemeral values through the write-only argument, once', () => {
    const versions = Object.entries(tf.resource.google_secret_manager_secret_version ?? {})
    expect(versions.length).toBeGreaterThan(0)
    for (const [name, [body]] of versions) {
      expect(body!.secret_data, `${name}: secret_data is stored in state`).toBeUndefined()
      const value = String(body!.secret_data_wo)
      expect(value, `${name}: secret_data_wo`).toMatch(/ephemeral\./)
      // nothing that lives in state may feed it
      expect(value.replace(/ephemeral\.[a-z_]+\.[a-z_]+\.[a-z0-9]+/g, ''), name).not.toMatch(/\b(random|google)_[a-z_]+\.[a-z_]+\./)
      // a constant: Terraform writes the value once and never again (rotation is gcloud's)
      expect(typeof body!.secret_data_wo_version, `${name}: secret_data_wo_version must be a literal`).toBe('number')
      const ignored = JSON.stringify((body!.lifecycle as Body[] | undefined)?.[0]?.ignore_changes ?? [])
      expect(ignored, `${name}: an operator disabling the first version after a rotation must stay in force`).toContain('enabled')
    }
    for (const [type, named] of Object.entries(tf.ephemeral)) expect(type, Object.keys(named).join()).toMatch(/^random_(password|bytes)$/)
  })

  it('no output exposes a secret value', () => {
    for (const [name, [body]] of Object.entries(tf.output)) expect(JSON.stringify(body), name).not.toMatch(/ephemeral\.|secret_version|secret_data/)
  })
})

describe('state and providers', () => {
  const terraformBlock = () => {
    const blocks = tf.terraform
    expect(blocks.length).toBe(1)
    return blocks[0]!
  }

  it('keeps state in a GCS backend, configured at init (partial configuration)', () => {
    const backend = terraformBlock().backend as Record<string, Body[]> | undefined
    expect(Object.keys(backend ?? {})).toEqual(['gcs'])
    // bucket and prefix come from `terraform init -backend-config=...`, never from the repository
    expect(backend!.gcs![0]).toEqual({})
  })

  it('requires a Terraform with write-only arguments (>= 1.11)', () => {
    const required = String(terraformBlock().required_version)
    const min = required.match(/>=\s*(\d+)\.(\d+)/)
    expect(min, required).toBeTruthy()
    expect(Number(min![1]) * 1000 + Number(min![2])).toBeGreaterThanOrEqual(1011)
  })

  it('commits a lock file that pins every required provider within its constraint, with hashes for every platform', () => {
    const lock = readFileSync(join(INFRA_DIR, '.terraform.lock.hcl'), 'utf8')
    const required = (terraformBlock().required_providers as Array<Record<string, { source: string; version: string }>>)[0]!
    expect(Object.keys(required).sort()).toEqual(['google', 'google-beta', 'random', 'time'])
    const parseVersion = (v: string) => v.split('.').map(Number)
    const cmp = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!
    for (const [name, { source, version }] of Object.entries(required)) {
      const block = lock.match(new RegExp(`provider "registry\\.terraform\\.io/${source}" \\{([\\s\\S]*?)\\n\\}`))
      expect(block, `${source} missing from infra/.terraform.lock.hcl`).toBeTruthy()
      const locked = block![1]!.match(/version\s+= "([^"]+)"/)![1]!
      expect(block![1]!.match(/constraints = "([^"]+)"/)![1], `${name}: lock constraints differ from versions.tf (run terraform providers lock)`).toBe(version)
      for (const part of version.split(',').map((p) => p.trim())) {
        const [, op, v] = part.match(/^(>=|<|<=|>|=|~>)\s*([\d.]+)$/)!
        const c = cmp(parseVersion(locked), parseVersion(v!.split('.').length === 2 ? `${v}.0` : v!))
        const ok = op === '>=' ? c >= 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c === 0
        expect(ok, `${name} ${locked} does not satisfy ${part}`).toBe(true)
      }
      // zh: hashes cover the release zip of every platform the registry publishes
      expect((block![1]!.match(/"zh:[0-9a-f]{64}"/g) ?? []).length, `${name}: zh hashes`).toBeGreaterThanOrEqual(12)
    }
    // the features used need: secret_data_wo (google >= 6.23), ephemeral random_bytes (random >= 3.9)
    expect(lock).toMatch(/hashicorp\/random" \{\s+version\s+= "3\.(9|\d\d)\./)
  })
})

describe('state, variables and the provider cache never leave the machine', () => {
  const sensitive = [
    'infra/terraform.tfstate',
    'infra/terraform.tfstate.backup',
    'infra/terraform.tfstate.1718.backup',
    'infra/plan.tfplan',
    'infra/.terraform/providers/x',
    'infra/terraform.tfvars',
    'infra/prod.auto.tfvars',
  ]
  // kept: what Cloud Build needs (the test step runs .ci/install-chromium, then the suite)
  const kept = ['infra/main.tf', 'infra/.terraform.lock.hcl', 'infra/terraform.tfvars.example', 'package.json', '.ci/install-chromium', 'scripts/run-tests.ts']

  function tree(files: string[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'lsv-ignore-'))
    for (const f of ['.gitignore', '.gcloudignore']) if (existsSync(join(CHECK_ROOT, f))) copyFileSync(join(CHECK_ROOT, f), join(dir, f))
    for (const f of files) {
      mkdirSync(dirname(join(dir, f)), { recursive: true })
      writeFileSync(join(dir, f), 'x')
    }
    return dir
  }

  it('git ignores them (.gitignore), and keeps the lock file', () => {
    const dir = tree([...sensitive, ...kept])
    try {
      expect(spawnSync('git', ['init', '-q'], { cwd: dir }).status).toBe(0)
      const ignored = (f: string) => spawnSync('git', ['check-ignore', '-q', f], { cwd: dir }).status === 0
      for (const f of sensitive) expect(ignored(f), `${f} not ignored by .gitignore`).toBe(true)
      for (const f of kept) expect(ignored(f), `${f} ignored by .gitignore`).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('gcloud builds submit does not upload them (.gcloudignore, read by gcloud itself)', () => {
    const dir = tree([...sensitive, ...kept])
    try {
      const res = spawnSync('gcloud', ['meta', 'list-files-for-upload', '.'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' },
      })
      if (res.error) throw new Error('gcloud not found: the test suite needs the Google Cloud CLI (it also runs the emulators)')
      expect(res.status, res.stderr).toBe(0)
      const uploaded = res.stdout.split('\n').filter(Boolean)
      for (const f of sensitive) expect(uploaded, `${f} would be uploaded`).not.toContain(f)
      for (const f of kept) expect(uploaded, `${f} would be left out`).toContain(f)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
