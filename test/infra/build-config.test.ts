import { describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { CHECK_ROOT, ROOT } from './hcl.ts'

const SERVICES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher']
const read = (file: string) => readFileSync(join(CHECK_ROOT, file), 'utf8')

interface Step {
  id: string
  name: string
  args?: string[]
  waitFor?: string[]
  entrypoint?: string
  env?: string[]
}
interface CloudBuild {
  steps: Step[]
  substitutions: Record<string, string>
  images: string[]
  options: Record<string, unknown>
}

/** the flags of a `gcloud run services update` command line, without their values */
const flagsOf = (args: string[]) =>
  args
    .filter((a) => a.startsWith('--'))
    .map((a) => a.split('=')[0]!)
    .sort()

describe('cloudbuild.yaml', () => {
  const cb = parse(read('cloudbuild.yaml')) as CloudBuild
  const byId = new Map(cb.steps.map((s) => [s.id, s]))

  it('is a valid build config for gcloud itself (its parser refuses unknown or mistyped fields)', () => {
    const info = spawnSync('gcloud', ['info', '--format=json'], { encoding: 'utf8' })
    if (info.error) throw new Error('gcloud not found: the test suite needs the Google Cloud CLI (it also runs the emulators)')
    const { installation, basic } = JSON.parse(info.stdout) as { installation: { sdk_root: string }; basic: { python_location: string } }
    const lib = join(installation.sdk_root, 'lib')
    const check = [
      'import sys',
      'from googlecloudsdk.api_lib.cloudbuild import cloudbuild_util, config',
      'b = config.LoadCloudbuildConfigFromPath(sys.argv[1], cloudbuild_util.GetMessagesModule())',
      'print(len(b.steps))',
    ].join('\n')
    const run = (file: string) =>
      spawnSync(basic.python_location, ['-c', check, file], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: `${lib}:${join(lib, 'third_party')}` } })
    const ok = run(join(CHECK_ROOT, 'cloudbuild.yaml'))
    expect(ok.status, ok.stderr).toBe(0)
    expect(Number(ok.stdout.trim())).toBe(cb.steps.length)
    // control: the same parser refuses a field Cloud Build does not know
    const dir = mkdtempSync(join(tmpdir(), 'lsv-cb-'))
    try {
      writeFileSync(join(dir, 'bad.yaml'), 'steps:\n  - name: gcr.io/cloud-builders/docker\n    environment: ["A=1"]\n')
      const bad = run(join(dir, 'bad.yaml'))
      expect(bad.status).not.toBe(0)
      expect(bad.stderr).toContain('environment')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('uses only substitutions that exist: $$ for a literal $ (Cloud Build refuses an unknown $NAME)', () => {
    const builtIn = new Set([
      'PROJECT_ID',
      'PROJECT_NUMBER',
      'BUILD_ID',
      'LOCATION',
      'TRIGGER_NAME',
      'COMMIT_SHA',
      'REVISION_ID',
      'SHORT_SHA',
      'REPO_NAME',
      'REPO_FULL_NAME',
      'BRANCH_NAME',
      'TAG_NAME',
      'REF_NAME',
      'TRIGGER_BUILD_CONFIG_PATH',
      'SERVICE_ACCOUNT_EMAIL',
      'SERVICE_ACCOUNT',
    ])
    const text = read('cloudbuild.yaml')
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .join('\n')
      .replaceAll('$$', '')
    const used = [...text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g)].map((m) => m[1]!)
    expect(used.length).toBeGreaterThan(0)
    for (const name of used) expect(builtIn.has(name) || Object.hasOwn(cb.substitutions, name), `unknown substitution $${name}`).toBe(true)
  })

  it('runs the full test command where gcloud, the emulators and terraform are on PATH, before building', () => {
    const test = byId.get('test')!
    const command = test.args!.join(' ')
    expect(command).toContain('scripts/run-tests.ts')
    expect(command).not.toContain('--no-emulators')
    // an image with gcloud and the emulators, at a fixed version
    expect(test.name).toMatch(/^gcr\.io\/google\.com\/cloudsdktool\/google-cloud-cli:\d+\.\d+\.\d+-emulators$/)
    // PATH is extended, never replaced: the image's own PATH is where gcloud is
    for (const e of test.env ?? []) expect(e, 'the test step must not set PATH (it would lose gcloud)').not.toMatch(/^PATH=/)
    const path = command.match(/export PATH="([^"]+)"/)?.[1]
    expect(path, 'the test step extends PATH').toBeTruthy()
    expect(path!.split(':').at(-1)).toBe('$$PATH')
    // terraform: copied from its official image by a step the test waits for, into that PATH
    const tfStep = test.waitFor!.map((id) => byId.get(id)!).find((s) => /^hashicorp\/terraform:\d+\.\d+\.\d+$/.test(s.name))
    expect(tfStep, 'a step providing the terraform binary').toBeTruthy()
    const copiedTo = tfStep!.args!.join(' ').match(/(\/workspace\/[^\s"']+)\/terraform\b/)?.[1]
    expect(copiedTo).toBeTruthy()
    expect(path!.split(':')).toContain(copiedTo)
    const [major, minor] = tfStep!.name.split(':')[1]!.split('.').map(Number)
    expect(major! * 1000 + minor!, 'terraform version in Cloud Build >= required_version 1.11').toBeGreaterThanOrEqual(1011)
    for (const s of SERVICES) expect(byId.get(`build-${s}`)!.waitFor).toEqual(['test'])
  })

  it("gives the test step Debian's Chromium before the suite runs (the browser tests need /usr/bin/chromium)", () => {
    const test = byId.get('test')!
    // the suite the step runs includes the portal's browser tests, which need Chromium
    expect(existsSync(join(ROOT, 'test', 'browser', 'portal.test.ts'))).toBe(true)
    // the one place the browser tests name the binary (the shared Chromium and a file's own)
    expect(readFileSync(join(ROOT, 'test', 'browser', 'local-stack.ts'), 'utf8')).toContain("'/usr/bin/chromium'")
    const parts = test
      .args!.at(-1)!
      .split('&&')
      .map((p) => p.trim())
    const suite = parts.findIndex((p) => p.includes('scripts/run-tests.ts'))
    expect(suite, 'the test step runs the suite').toBeGreaterThanOrEqual(0)
    const chromium = parts.indexOf('bash .ci/install-chromium')
    expect(chromium, 'the test step runs .ci/install-chromium').toBeGreaterThanOrEqual(0)
    expect(chromium, 'Chromium is installed before the suite starts').toBeLessThan(suite)
    // an image with apt-get: the -emulators tags are Debian-based (Debian 13 since 2026), run as root
    expect(test.name).toMatch(/-emulators$/)
    // .ci/run, the other CI entry point, uses the same script
    expect(read('.ci/run')).toMatch(/^\.ci\/install-chromium$/m)
  })

  /** Runs .ci/install-chromium with an apt-get stand-in that records its calls and may "install" the binary. */
  function installChromium(opts: { present: boolean; aptInstalls: boolean }): { status: number | null; stderr: string; apt: string[] } {
    const dir = mkdtempSync(join(tmpdir(), 'lsv-chromium-'))
    try {
      const chromium = join(dir, 'chromium')
      if (opts.present) {
        writeFileSync(chromium, '#!/bin/sh\n')
        chmodSync(chromium, 0o755)
      }
      const install = opts.aptInstalls ? `if [ "$1" = install ]; then printf '#!/bin/sh\\n' > '${chromium}'; chmod +x '${chromium}'; fi` : ''
      writeFileSync(join(dir, 'apt-get'), `#!/usr/bin/env bash\necho "$*" >> '${dir}/apt.calls'\n${install}\n`)
      chmodSync(join(dir, 'apt-get'), 0o755)
      const res = spawnSync('bash', [join(CHECK_ROOT, '.ci', 'install-chromium')], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, CHROMIUM_PATH: chromium },
      })
      const apt = existsSync(join(dir, 'apt.calls')) ? readFileSync(join(dir, 'apt.calls'), 'utf8').trim().split('\n') : []
      return { status: res.status, stderr: res.stderr, apt }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it(".ci/install-chromium apt-installs Debian's chromium only when it is missing, and fails when it is still missing", () => {
    const missing = installChromium({ present: false, aptInstalls: true })
    expect(missing.status, missing.stderr).toBe(0)
    expect(missing.apt).toHaveLength(2)
    expect(missing.apt[0]).toMatch(/^update\b/)
    expect(missing.apt[1]!.split(' ')).toEqual(expect.arrayContaining(['install', '-y', 'chromium']))
    const present = installChromium({ present: true, aptInstalls: true })
    expect(present.status, present.stderr).toBe(0)
    expect(present.apt).toEqual([])
    const broken = installChromium({ present: false, aptInstalls: false })
    expect(broken.status).not.toBe(0)
    expect(broken.stderr).toContain('still missing')
  })

  /**
   * Google deletes google-cloud-cli image versions older than a year (cloud-sdk-docker README,
   * "Package retention policy"): a build pinned to such a version cannot start. The release date
   * of the pinned version is written next to it; this fails a month before the image goes.
   */
  it('pins every google-cloud-cli image to one version released less than 11 months ago (by the real clock)', () => {
    const text = read('cloudbuild.yaml')
    const recorded = text.match(/^# google-cloud-cli (\d+\.\d+\.\d+): released (\d{4}-\d{2}-\d{2}) /m)
    expect(recorded, 'cloudbuild.yaml records "# google-cloud-cli <version>: released <YYYY-MM-DD> "').toBeTruthy()
    const [, version, date] = recorded!
    const images = cb.steps.map((s) => s.name).filter((n) => n.includes('/cloudsdktool/google-cloud-cli:'))
    expect(images.length).toBeGreaterThanOrEqual(5)
    for (const image of images) expect(image.split(':')[1]!.split('-')[0], image).toBe(version)
    const released = new Date(`${date}T00:00:00Z`)
    expect(Number.isNaN(released.getTime())).toBe(false)
    const expires = new Date(released)
    expires.setUTCMonth(expires.getUTCMonth() + 11)
    // mutation: record 528.0.0 with its date, 2025-06-24 (today is past 2026-05-24)
    expect(Date.now(), `google-cloud-cli ${version} (released ${date}) is 11 months old: pin a current release`).toBeLessThan(expires.getTime())
    // and not a date in the future (a typo would keep this test quiet for years)
    expect(released.getTime()).toBeLessThanOrEqual(Date.now())
  })

  // mutation: drop `bash .ci/install-git &&` from the test step (the -emulators image has no git)
  it('has git in the step that runs the suite (test/infra/state.test.ts runs git init)', () => {
    expect(readFileSync(join(ROOT, 'test', 'infra', 'state.test.ts'), 'utf8')).toMatch(/spawnSync\('git', \['init'/)
    const test = byId.get('test')!
    const parts = test
      .args!.at(-1)!
      .split('&&')
      .map((p) => p.trim())
    const suite = parts.findIndex((p) => p.includes('scripts/run-tests.ts'))
    // only the -slim images ship git (cloud-sdk-docker debian_slim/Dockerfile); others install it first
    if (!test.name.endsWith('-slim')) {
      const git = parts.indexOf('bash .ci/install-git')
      expect(git, 'the test step runs .ci/install-git').toBeGreaterThanOrEqual(0)
      expect(git, 'git is installed before the suite starts').toBeLessThan(suite)
    }
  })

  it('.ci/install-git apt-installs git only when it is missing, and fails when it is still missing', () => {
    const run = (opts: { present: boolean; aptInstalls: boolean }) => {
      const dir = mkdtempSync(join(tmpdir(), 'lsv-git-'))
      try {
        const git = join(dir, 'git')
        if (opts.present) {
          writeFileSync(git, '#!/bin/sh\n')
          chmodSync(git, 0o755)
        }
        const install = opts.aptInstalls ? `if [ "$1" = install ]; then printf '#!/bin/sh\\n' > '${git}'; chmod +x '${git}'; fi` : ''
        writeFileSync(join(dir, 'apt-get'), `#!/usr/bin/env bash\necho "$*" >> '${dir}/apt.calls'\n${install}\n`)
        chmodSync(join(dir, 'apt-get'), 0o755)
        const res = spawnSync('bash', [join(CHECK_ROOT, '.ci', 'install-git')], {
          encoding: 'utf8',
          env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, GIT_PATH: git },
        })
        const apt = existsSync(join(dir, 'apt.calls')) ? readFileSync(join(dir, 'apt.calls'), 'utf8').trim().split('\n') : []
        return { status: res.status, stderr: res.stderr, apt }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    const missing = run({ present: false, aptInstalls: true })
    expect(missing.status, missing.stderr).toBe(0)
    expect(missing.apt).toHaveLength(2)
    expect(missing.apt[0]).toMatch(/^update\b/)
    expect(missing.apt[1]!.split(' ')).toEqual(expect.arrayContaining(['install', '-y', 'git']))
    const present = run({ present: true, aptInstalls: true })
    expect(present.status, present.stderr).toBe(0)
    expect(present.apt).toEqual([])
    const broken = run({ present: false, aptInstalls: false })
    expect(broken.status).not.toBe(0)
    expect(broken.stderr).toContain('still missing')
  })

  it('leaves the build time for install, Chromium, the suite, four image builds and roll-outs', () => {
    const seconds = (t: unknown) => Number(String(t).replace(/s$/, ''))
    // the suite alone takes about 14 minutes on 2 cores (8 here); everything else about 15
    expect(seconds((cb as CloudBuild & { timeout?: string }).timeout)).toBeGreaterThanOrEqual(3600)
    for (const s of cb.steps) {
      const t = (s as Step & { timeout?: string }).timeout
      if (t !== undefined) expect(seconds(t), `${s.id} step timeout`).toBeGreaterThanOrEqual(s.id === 'test' ? 2400 : 600)
    }
  })

  it('installs on the same pinned Node image the services run on', () => {
    const dockerfileImage = read('Dockerfile').match(/^ARG NODE_IMAGE=(\S+)$/m)![1]
    expect(byId.get('install')!.name).toBe(dockerfileImage)
  })

  it('builds, pushes and rolls out every service; the roll-out changes only the image', () => {
    expect(cb.substitutions._IMAGE_BASE).toContain('${PROJECT_ID}')
    for (const s of SERVICES) {
      expect(byId.get(`build-${s}`)!.args).toEqual(expect.arrayContaining(['build', `SERVICE=${s}`]))
      const push = byId.get(`push-${s}`)!
      expect(push.waitFor).toEqual([`build-${s}`])
      expect(push.args).toEqual(['push', `\${_IMAGE_BASE}/${s}:$BUILD_ID`])
      const deploy = byId.get(`deploy-${s}`)!
      expect(deploy.waitFor).toEqual([`push-${s}`])
      expect(deploy.name).toMatch(/^gcr\.io\/google\.com\/cloudsdktool\/google-cloud-cli:\d+\.\d+\.\d+-slim$/)
      expect(deploy.args!.slice(0, 4)).toEqual(['run', 'services', 'update', s])
      expect(flagsOf(deploy.args!)).toEqual(['--image', '--quiet', '--region'])
      expect(deploy.args).toContain(`--image=\${_IMAGE_BASE}/${s}:$BUILD_ID`)
      expect(cb.images).toContain(`\${_IMAGE_BASE}/${s}:$BUILD_ID`)
    }
  })
})

describe('skaffold.yaml and deploy/roll-out.sh', () => {
  const sk = parse(read('skaffold.yaml')) as Record<string, unknown> & {
    build: { artifacts: Array<{ image: string; docker: { dockerfile: string; buildArgs: Record<string, string> } }> }
    deploy?: { cloudrun?: { projectid?: string; hooks?: { before?: Array<{ command: string[] }> } } }
    profiles?: Array<Record<string, unknown>>
  }

  it('builds the four images from the one Dockerfile (skaffold v4 schema)', () => {
    expect(sk.apiVersion).toMatch(/^skaffold\/v4beta\d+$/)
    expect(sk.build.artifacts.map((a) => a.image).sort()).toEqual([...SERVICES].sort())
    for (const a of sk.build.artifacts) {
      expect(a.docker.dockerfile).toBe('Dockerfile')
      expect(a.docker.buildArgs.SERVICE).toBe(a.image)
    }
  })

  it('deploys no manifest anywhere (a Cloud Run manifest replaces the whole service) and names no project', () => {
    expect(sk.manifests, 'top-level manifests').toBeUndefined()
    for (const p of sk.profiles ?? []) {
      expect(p.manifests, `profile ${String(p.name)} manifests`).toBeUndefined()
      expect(p.deploy, `profile ${String(p.name)} deploy`).toBeUndefined()
    }
    expect(existsSync(join(CHECK_ROOT, 'deploy', 'cloudrun')), 'deploy/cloudrun manifests').toBe(false)
    expect(sk.deploy?.cloudrun?.projectid).toBeUndefined()
    expect(read('skaffold.yaml')).not.toMatch(/iam\.gserviceaccount\.com|projectid|projectId/)
  })

  it('`skaffold run` stops before deploying, pointing at the roll-out script', () => {
    const hook = sk.deploy?.cloudrun?.hooks?.before?.[0]?.command
    expect(hook, 'a before-deploy hook').toBeTruthy()
    const res = spawnSync(hook![0]!, hook!.slice(1), { encoding: 'utf8' })
    expect(res.status).not.toBe(0)
    expect(res.stderr).toContain('deploy/roll-out.sh')
  })

  /** Runs deploy/roll-out.sh with stand-ins for skaffold and gcloud that record how they are called. */
  function rollOut(builtImages: string[]): { status: number | null; stderr: string; skaffold: string[][]; gcloud: string[][] } {
    expect(existsSync(join(CHECK_ROOT, 'deploy', 'roll-out.sh')), 'deploy/roll-out.sh').toBe(true)
    const dir = mkdtempSync(join(tmpdir(), 'lsv-rollout-'))
    try {
      const stub = (name: string, body: string) => {
        writeFileSync(join(dir, name), `#!/usr/bin/env bash\nprintf '%s\\0' "$@" >> "${dir}/${name}.calls"; printf '\\n' >> "${dir}/${name}.calls"\n${body}\n`)
        chmodSync(join(dir, name), 0o755)
      }
      stub('skaffold', `printf '%s\\n' ${builtImages.map((l) => `'${l}'`).join(' ')}`)
      stub('gcloud', 'exit 0')
      const res = spawnSync('bash', [join(CHECK_ROOT, 'deploy', 'roll-out.sh'), 'my-project', 'europe-west1'], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      })
      const calls = (name: string) =>
        existsSync(join(dir, `${name}.calls`))
          ? readFileSync(join(dir, `${name}.calls`), 'utf8')
              .split('\0\n')
              .filter(Boolean)
              .map((c) => c.split('\0'))
          : []
      return { status: res.status, stderr: res.stderr, skaffold: calls('skaffold'), gcloud: calls('gcloud') }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('roll-out builds with skaffold and changes only the image of each Terraform-managed service', () => {
    const built = SERVICES.map((s) => `${s} europe-west1-docker.pkg.dev/my-project/lsv/${s}:abc123@sha256:${'0'.repeat(64)}`)
    const run = rollOut(built)
    expect(run.status, run.stderr).toBe(0)
    expect(run.skaffold).toHaveLength(1)
    expect(run.skaffold[0]!.slice(0, 1)).toEqual(['build'])
    expect(run.skaffold[0]).toContain('--default-repo=europe-west1-docker.pkg.dev/my-project/lsv')
    expect(run.gcloud).toHaveLength(4)
    for (const [i, s] of SERVICES.entries()) {
      expect(run.gcloud[i]).toEqual([
        'run',
        'services',
        'update',
        s,
        `--image=${built[i]!.split(' ')[1]}`,
        '--region=europe-west1',
        '--project=my-project',
        '--quiet',
      ])
    }
    // the same image-only change as Cloud Build's deploy steps (plus the project, which Cloud Build knows)
    const cb = parse(read('cloudbuild.yaml')) as CloudBuild
    const cloudBuildFlags = flagsOf(cb.steps.find((s) => s.id === 'deploy-edge-ingest')!.args!)
    expect(flagsOf(run.gcloud[0]!)).toEqual([...cloudBuildFlags, '--project'].sort())
  })

  it('roll-out changes nothing when skaffold did not build all four images', () => {
    const run = rollOut(SERVICES.slice(0, 3).map((s) => `${s} europe-west1-docker.pkg.dev/my-project/lsv/${s}:abc`))
    expect(run.status).not.toBe(0)
    expect(run.gcloud).toEqual([])
  })
})

describe('Dockerfile', () => {
  const text = read('Dockerfile')

  it('runs on the Node version the tests run on, pinned by tag and digest', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    const node = pkg.devDependencies.node!
    expect(node).toMatch(/^\d+\.\d+\.\d+$/)
    const image = text.match(/^ARG NODE_IMAGE=(\S+)$/m)?.[1]
    expect(image).toMatch(new RegExp(`^node:${node.replaceAll('.', '\\.')}-slim@sha256:[0-9a-f]{64}$`))
    expect(text.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2)
    for (const from of text.match(/^FROM (\S+)/gm)!) expect(from).toMatch(/^FROM \$\{NODE_IMAGE\}/)
  })

  it('runs as the unprivileged node user, which cannot write the code it runs', () => {
    const runtime = text.slice(text.lastIndexOf('FROM '))
    expect(runtime).toMatch(/^USER node$/m)
    expect(runtime.indexOf('USER node')).toBeGreaterThan(runtime.lastIndexOf('COPY'))
    expect(runtime).not.toMatch(/--chown|chown |chmod /)
    expect(text).toMatch(/npm ci --omit=dev --workspace "services\/\$\{SERVICE\}"/)
    expect(text).toMatch(/^ENV NODE_ENV=production$/m)
    expect(text).toMatch(/^CMD \["node", "main\.mjs"\]$/m)
  })

  it('leaves Terraform state and variables, and the local data folders, out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
    for (const p of ['infra', '**/*.tfstate', '**/*.tfstate.*', '**/.terraform', '**/terraform.tfvars']) expect(ignored).toContain(p)
    // the local data folders (npm start's .data, start:cloud's .data-cloud with its secrets file)
    for (const p of ['**/.data', '**/.data-*']) expect(ignored).toContain(p)
  })
})
