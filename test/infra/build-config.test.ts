import { describe, expect, it } from 'vitest'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'

const ROOT = join(import.meta.dirname, '..', '..')
const SERVICES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher']

interface Step { id: string; name: string; args?: string[]; waitFor?: string[]; entrypoint?: string }

describe('cloudbuild.yaml', () => {
  const cb = parse(readFileSync(join(ROOT, 'cloudbuild.yaml'), 'utf8')) as { steps: Step[]; substitutions: Record<string, string>; images: string[] }
  const byId = new Map(cb.steps.map((s) => [s.id, s]))

  it('has substitutions for region and repository and uses the project id', () => {
    expect(cb.substitutions._REGION).toBeTruthy()
    expect(cb.substitutions._REPOSITORY).toBeTruthy()
    expect(cb.substitutions._IMAGE_BASE).toContain('${PROJECT_ID}')
  })

  it('runs the test command before building', () => {
    const test = byId.get('test')!
    expect(test.args!.join(' ')).toContain('scripts/run-tests.ts')
    for (const s of SERVICES) expect(byId.get(`build-${s}`)!.waitFor).toEqual(['test'])
  })

  it('builds, pushes and deploys every service, the builds in parallel', () => {
    for (const s of SERVICES) {
      const build = byId.get(`build-${s}`)!
      expect(build.args).toEqual(expect.arrayContaining(['build', `SERVICE=${s}`]))
      const push = byId.get(`push-${s}`)!
      expect(push.waitFor).toEqual([`build-${s}`])
      expect(push.args).toEqual(['push', `\${_IMAGE_BASE}/${s}:$BUILD_ID`])
      const deploy = byId.get(`deploy-${s}`)!
      expect(deploy.waitFor).toEqual([`push-${s}`])
      // only the image changes on deploy: no env, flags or traffic settings besides region
      const flags = deploy.args!.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0])
      expect(flags.sort()).toEqual(['--image', '--quiet', '--region'])
      expect(deploy.args).toContain(`--image=\${_IMAGE_BASE}/${s}:$BUILD_ID`)
      expect(cb.images).toContain(`\${_IMAGE_BASE}/${s}:$BUILD_ID`)
    }
  })
})

describe('skaffold.yaml', () => {
  const sk = parse(readFileSync(join(ROOT, 'skaffold.yaml'), 'utf8')) as {
    apiVersion: string
    build: { artifacts: Array<{ image: string; docker: { dockerfile: string; buildArgs: Record<string, string> } }> }
    manifests: { rawYaml: string[] }
    deploy: { cloudrun: unknown }
    profiles: Array<{ name: string; build?: { googleCloudBuild?: unknown }; deploy?: { cloudrun?: unknown } }>
  }

  it('uses the v4 schema with the four artifacts from the one Dockerfile', () => {
    expect(sk.apiVersion).toMatch(/^skaffold\/v4/)
    expect(sk.build.artifacts.map((a) => a.image).sort()).toEqual([...SERVICES].sort())
    for (const a of sk.build.artifacts) {
      expect(a.docker.dockerfile).toBe('Dockerfile')
      expect(a.docker.buildArgs.SERVICE).toBe(a.image)
    }
  })

  it('deploys to Cloud Run from manifests in their own folder, with dev, prod and Cloud Build profiles', () => {
    expect(sk.deploy.cloudrun).toBeTruthy()
    for (const s of SERVICES) {
      const file = `deploy/cloudrun/${s}.yaml`
      expect(sk.manifests.rawYaml).toContain(file)
      const manifest = parse(readFileSync(join(ROOT, file), 'utf8')) as { metadata: { name: string }; spec: { template: { spec: { containers: Array<{ image: string }> } } } }
      expect(manifest.metadata.name).toBe(s)
      expect(manifest.spec.template.spec.containers[0]!.image).toBe(s)
    }
    const names = sk.profiles.map((p) => p.name)
    expect(names).toEqual(expect.arrayContaining(['dev', 'prod', 'cloudbuild']))
    expect(sk.profiles.find((p) => p.name === 'cloudbuild')!.build!.googleCloudBuild).toBeTruthy()
  })
})

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  it('is multi-stage on node:24-slim, non-root, installs one workspace without dev dependencies, starts node directly', () => {
    expect(text).toMatch(/ARG NODE_IMAGE=node:24-slim/)
    expect(text.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2)
    expect(text).toMatch(/npm ci --omit=dev --workspace "services\/\$\{SERVICE\}"/)
    expect(text).toMatch(/^USER node$/m)
    expect(text).toMatch(/^CMD \["node", "main\.mjs"\]$/m)
    expect(existsSync(join(ROOT, '.dockerignore'))).toBe(true)
  })
})
