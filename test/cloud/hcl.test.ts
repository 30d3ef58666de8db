/**
 * The HCL evaluator start:cloud reads infra/ with: Terraform's own parser (hclsyntax, through
 * @cdktf/hcl2json's getExpressionAst) turns each expression into a tree, the forms infra/ uses
 * evaluate as Terraform would, every form the evaluator does not handle throws naming it (a service
 * must never start with a variable quietly missing), and the real infra/ evaluates to environments
 * that point at this machine.
 */
import { describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { evaluate, HclError, parseTemplate, parseTemplates, type HclValue, type Scope } from '../../scripts/lib/cloud/hcl-expr.ts'
import { loadTerraform } from '../../scripts/lib/cloud/terraform.ts'
import { readDeployedShape, type LocalSettings } from '../../scripts/lib/cloud/deployed-shape.ts'
import { createIam, invokerRefusal } from '../../scripts/lib/cloud/iam.ts'
import { ROOT } from './support.ts'

const vars: Record<string, HclValue> = { region: 'europe-west1', name: 'x', list: ['b', 'a', 'b'], obj: { k: 'v', n: 2 } }
const scope: Scope = {
  reference(root, steps) {
    if (root !== 'var') throw new HclError(`unknown reference ${root}`)
    const s = steps[0]
    if (!s || s.kind !== 'attr' || !(s.name in vars)) throw new HclError(`var.${s && s.kind === 'attr' ? s.name : '?'} is not declared`)
    return { value: vars[s.name]!, used: 1 }
  },
}
/** one hcl2json string value (a template), parsed by Terraform's parser and evaluated */
const ev = async (src: string) => evaluate(await parseTemplate(src), scope)

describe('HCL expressions', () => {
  it('evaluates templates, references, collections, for expressions and functions', async () => {
    expect(await ev('plain')).toBe('plain')
    expect(await ev('https://${var.name}-1.${var.region}.run.app')).toBe('https://x-1.europe-west1.run.app')
    expect(await ev('${var.obj}')).toEqual({ k: 'v', n: 2 })
    expect(await ev('${var.obj["k"]}')).toBe('v')
    expect(await ev('${var.obj.n}')).toBe(2)
    expect(await ev('${merge(var.obj, { k = "w", extra = var.name })}')).toEqual({ k: 'w', n: 2, extra: 'x' })
    expect(await ev('${toset(var.list)}')).toEqual(['a', 'b'])
    expect(await ev('${{ for n in toset(var.list) : n => "u-${n}" }}')).toEqual({ a: 'u-a', b: 'u-b' })
    expect(await ev('${[for k, v in var.obj : k]}')).toEqual(['k', 'n'])
    expect(await ev('${merge([for n in ["p", "q"] : { (n) = n }]...)}')).toEqual({ p: 'p', q: 'q' })
    expect(await ev('${jsonencode({ b = 1, a = [true, null] })}')).toBe('{"a":[true,null],"b":1}')
    expect(await ev('a $${literal} b')).toBe('a ${literal} b')
    expect(await ev('${"quoted \\"${var.name}\\""}')).toBe('quoted "x"')
    expect(await ev('${{ a = 1 }["a"]}')).toBe(1)
  })

  it("takes the tree from Terraform's parser: forms a hand-written parser never read evaluate, and its syntax errors are Terraform's", async () => {
    // a heredoc inside an interpolation: its text has no backslash escapes (mutation: decoding
    // heredoc literals like quoted ones turns `\n` into a newline and fails the first expectation)
    expect(await ev('${jsonencode(<<EOT\nsay "hi" \\n\nEOT\n)}')).toBe(JSON.stringify('say "hi" \\n\n'))
    // a quoted string's escapes decode (mutation: not decoding quoted literals leaves `\u00e9`)
    expect(await ev('${"caf\\u00e9\\t${var.name}"}')).toBe('caf\u00e9\tx')
    // comments, newlines and `:` inside an object; a legacy `.0` index; a computed index
    expect(await ev('${{\n  a = var.list.1 # the second\n  b : var.obj[keys(var.obj)[0]]\n}}')).toEqual({ a: 'a', b: 'v' })
    // literal text around interpolations, including quotes and newlines hcl2json already decoded
    expect(await ev('say "${var.name}"\nthen ${var.obj.n}')).toBe('say "x"\nthen 2')
    // a template that is exactly one interpolation keeps the value's type (mutation: always
    // joining parts into a string makes this "2")
    expect(await ev('${var.obj.n}')).toBe(2)
    // many strings in one call to the parser, each mapped to its own tree or refusal (mutation:
    // misaligning the batch's children with its inputs swaps these values)
    const batch = await parseTemplates(['${var.name}', 'lit', '${var.obj.n}', '${var.name', '${var.region}-${var.name}'])
    const value = (s: string) => {
      const t = batch.get(s)!
      if (t instanceof HclError) throw t
      return evaluate(t, scope)
    }
    expect([value('${var.name}'), value('lit'), value('${var.obj.n}'), value('${var.region}-${var.name}')]).toEqual(['x', 'lit', 2, 'europe-west1-x'])
    expect(() => value('${var.name')).toThrow(/Terraform's parser refuses "\$\{var\.name": .*Extra characters after interpolation expression/)
    await expect(ev('${[1, 2')).rejects.toThrow(/Terraform's parser refuses/)
  })

  it('throws, naming the form, on everything outside the subset', async () => {
    // each of these parses (Terraform's grammar has it); the evaluator refuses it by name
    // (mutation: evaluating a conditional as its true branch, an operator as its left side, or a
    // splat as its source makes the matching case resolve instead of reject)
    const cases: Array<[string, RegExp]> = [
      ['${var.name == "x" ? "a" : "b"}', /unsupported: conditional expressions \(… \? … : …\) in `var\.name == "x" \? "a" : "b"`/],
      ['${var.name != "x"}', /unsupported: operator "!=" in `var\.name != "x"`/],
      ['${!true}', /unsupported: operator "!"/],
      ['${-1}', /unsupported: operator "-"/],
      ['${var.missing}', /var\.missing is not declared/],
      ['${var.obj["nope"]}', /no such key/],
      ['${var.list[7]}', /no such element/],
      ['${upper(var.name)}', /function upper\(\) is not supported/],
      ['${provider::google::region_from_id("x")}', /function provider::google::region_from_id\(\) is not supported/],
      ['${toString(var.name)}', /function toString\(\) is not supported/],
      ['${var.list[*]}', /unsupported: splat/],
      ['${var.list.*.x}', /unsupported: splat/],
      ['%{ if true }x%{ endif }', /unsupported: template directives \(%\{ if \}\)/],
      ['%{ for x in var.list }${x}%{ endfor }', /unsupported: template directives \(%\{ for \}\)/],
      ['${"a ${~var.name} b"}', /unsupported: strip markers/],
      ['${<<-EOT\n  indented\n  EOT\n}', /unsupported: indented heredocs/],
      ['${var.name}${var.obj}', /cannot interpolate an object/],
      ['${local.x}', /unknown reference local/],
      ['${[for n in var.list : n if n == "a"]}', /unsupported: operator "==" in `n == "a"`/],
      ['${{ for k, v in var.obj : v => k... }}', /grouping/],
    ]
    for (const [src, message] of cases) await expect(ev(src), src).rejects.toThrow(message)
  })
})

describe('infra/ read by code', () => {
  function withInfra(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'lsv-hcl-'))
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    return dir
  }

  it('computes what only an apply knows (service account emails, topic ids, the project number) and refuses duplicate or unset variables', async () => {
    const dir = withInfra({
      'main.tf': `
        variable "project_id" { type = string }
        variable "region" { default = "europe-west1" }
        data "google_project" "this" { project_id = var.project_id }
        resource "google_service_account" "push" { account_id = "pubsub-push" }
        resource "google_pubsub_topic" "main" {
          for_each = toset(["a-topic", "b-topic"])
          name     = each.value
        }
        locals {
          url   = "https://svc-\${data.google_project.this.number}.\${var.region}.run.app"
          email = google_service_account.push.email
          ids   = { for k, t in google_pubsub_topic.main : k => t.id }
          bad   = google_pubsub_topic.main["a-topic"].message_retention_duration
          cond  = var.region == "europe-west1" ? "a" : "b"
        }`,
    })
    try {
      const tf = await loadTerraform(dir, { variables: { project_id: 'demo-p' }, projectNumber: '42' })
      expect(tf.local('url')).toBe('https://svc-42.europe-west1.run.app')
      expect(tf.local('email')).toBe('pubsub-push@demo-p.iam.gserviceaccount.com')
      expect(tf.local('ids')).toEqual({ 'a-topic': 'projects/demo-p/topics/a-topic', 'b-topic': 'projects/demo-p/topics/b-topic' })
      expect(() => tf.local('bad')).toThrow(/message_retention_duration is neither set in infra\/ nor an attribute start:cloud knows/)
      // parsed on loading, refused only when read (mutation: refusing unsupported forms while
      // parsing would make loadTerraform, and every local above, fail)
      expect(() => tf.local('cond')).toThrow(/^local\.cond: unsupported: conditional expressions/)
      const unset = await loadTerraform(dir, { variables: {}, projectNumber: '42' })
      expect(() => unset.local('email')).toThrow(/var\.project_id has no default and no local value/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const twice = withInfra({ 'v.tf': 'variable "a" { default = 1 }\nvariable "a" { default = 2 }\n' })
    try {
      await expect(loadTerraform(twice, { variables: {}, projectNumber: '42' })).rejects.toThrow(/variable "a" is declared more than once/)
    } finally {
      rmSync(twice, { recursive: true, force: true })
    }
  })

  const local: LocalSettings = {
    infraDir: join(ROOT, 'infra'),
    project: 'demo-lsv-shape',
    ports: { 'edge-ingest': 18080, 'portal-api': 18081, 'upsert-worker': 18082, 'webhook-dispatcher': 18083 },
    edgeDomain: 'edge.localhost',
    edgeBaseUrlTemplate: 'http://{public_id}.edge.localhost:18080',
    portalBaseUrl: 'http://localhost:18081',
  }

  it("the real infra/: each service's environment with the Cloud Run URLs as this machine's, push subscriptions as declared", async () => {
    const shape = await readDeployedShape(local)
    const env = Object.fromEntries(shape.services.map((s) => [s.name, s.env]))
    for (const s of shape.services) {
      expect(s.env.NODE_ENV, s.name).toBe('production')
      expect(s.env.GOOGLE_CLOUD_PROJECT, s.name).toBe('demo-lsv-shape')
      for (const value of Object.values(s.env)) expect(value, s.name).not.toMatch(/run\.app|^https:/)
    }
    expect(env['upsert-worker']).toMatchObject({
      PUSH_AUDIENCE: 'http://127.0.0.1:18082',
      PUSH_SERVICE_ACCOUNT: 'pubsub-push@demo-lsv-shape.iam.gserviceaccount.com',
    })
    expect(env['webhook-dispatcher']).toMatchObject({ PUSH_AUDIENCE: 'http://127.0.0.1:18083', DISPATCHER_URL: 'http://127.0.0.1:18083' })
    expect(env['portal-api']).toMatchObject({
      DISPATCHER_URL: 'http://127.0.0.1:18083',
      PORTAL_BASE_URL: 'http://localhost:18081',
      EDGE_BASE_URL_TEMPLATE: 'http://{public_id}.edge.localhost:18080',
    })
    const batches = shape.subscriptions.find((s) => s.name === 'contact-batches-push')!
    expect(batches.push).toEqual({
      endpoint: 'http://127.0.0.1:18082/pubsub/contact-batches',
      oidc: { serviceAccountEmail: 'pubsub-push@demo-lsv-shape.iam.gserviceaccount.com', audience: 'http://127.0.0.1:18082' },
      noWrapper: null,
    })
    expect(batches.deadLetterPolicy).toMatchObject({ deadLetterTopic: 'contact-batches-dead-letter' })
    // the dead letters' second subscription, pushed to the dispatcher (batch.dead_lettered); the
    // inspection subscription stays a pull one (mutation: alerts resource dropped -> undefined)
    const alerts = shape.subscriptions.find((s) => s.name === 'contact-batches-dead-letter-alerts')!
    expect(alerts).toMatchObject({ topic: 'contact-batches-dead-letter', deadLetterPolicy: null })
    expect(alerts.push).toEqual({
      endpoint: 'http://127.0.0.1:18083/pubsub/contact-batches-dead-letter',
      oidc: { serviceAccountEmail: 'pubsub-push@demo-lsv-shape.iam.gserviceaccount.com', audience: 'http://127.0.0.1:18083' },
      noWrapper: null,
    })
    expect(shape.subscriptions.find((s) => s.name === 'contact-batches-dead-letter-sub')?.push).toBeNull()
    const bigquery = shape.subscriptions.find((s) => s.replacesBigQuery)!
    expect(bigquery).toMatchObject({ name: 'contact-changes-bigquery', topic: 'contact-changes', push: null })
    expect(shape.secrets.sort()).toEqual(['alert-smtp-url', 'key-pepper', 'link-signing-keys', 'operator-events-secret', 'operator-token'])
  })

  it("the real infra/'s IAM grants, as the stand-ins enforce them: task creators may create tasks as tasks-invoker, secrets only for their readers", async () => {
    const shape = await readDeployedShape(local)
    const iam = createIam(shape.grants, shape.customRoles)
    const sa = (n: string) => `${n}@demo-lsv-shape.iam.gserviceaccount.com`
    for (const creator of ['portal-api', 'webhook-dispatcher']) {
      expect(iam.allows(sa(creator), 'cloudtasks.queues.create', 'queue:q-1'), creator).toBe(true)
      expect(iam.allows(sa(creator), 'cloudtasks.tasks.create', 'queue:q-1'), creator).toBe(true)
      expect(iam.allows(sa(creator), 'iam.serviceAccounts.actAs', `serviceAccount:${sa('tasks-invoker')}`), creator).toBe(true)
    }
    expect(iam.allows(sa('edge-ingest'), 'cloudtasks.tasks.create', 'queue:q-1')).toBe(false)
    expect(iam.allows(sa('upsert-worker'), 'iam.serviceAccounts.actAs', `serviceAccount:${sa('tasks-invoker')}`)).toBe(false)
    for (const s of shape.services) {
      for (const secret of Object.values(s.secretEnv))
        expect(iam.allows(s.serviceAccount, 'secretmanager.versions.access', `secret:${secret}`), `${s.name} ${secret}`).toBe(true)
    }
    for (const reader of ['portal-api', 'webhook-dispatcher'])
      expect(iam.allows(sa(reader), 'secretmanager.versions.access', 'secret:link-signing-keys'), reader).toBe(true)
    // the dispatcher signs operational events; no other service reads their secret
    expect(iam.allows(sa('webhook-dispatcher'), 'secretmanager.versions.access', 'secret:operator-events-secret')).toBe(true)
    expect(iam.allows(sa('portal-api'), 'secretmanager.versions.access', 'secret:operator-events-secret')).toBe(false)
    expect(iam.allows(sa('upsert-worker'), 'secretmanager.versions.access', 'secret:key-pepper')).toBe(false)
    // the alert emails' relay: where alerts are sent (the dispatcher; portal-api's test alert), nowhere else
    for (const reader of ['portal-api', 'webhook-dispatcher'])
      expect(iam.allows(sa(reader), 'secretmanager.versions.access', 'secret:alert-smtp-url'), reader).toBe(true)
    for (const other of ['edge-ingest', 'upsert-worker'])
      expect(iam.allows(sa(other), 'secretmanager.versions.access', 'secret:alert-smtp-url'), other).toBe(false)
  })

  it("the real infra/'s Cloud Run invoker grants: the push identity on the two pushed services, the task identity on the dispatcher, anyone on the public two", async () => {
    const shape = await readDeployedShape(local)
    const iam = createIam(shape.grants, shape.customRoles)
    const sa = (n: string) => `${n}@demo-lsv-shape.iam.gserviceaccount.com`
    const may = (who: string | null, service: string) => invokerRefusal(iam, who, service) === null
    for (const pushed of ['upsert-worker', 'webhook-dispatcher']) expect(may(sa('pubsub-push'), pushed), pushed).toBe(true)
    expect(may(sa('tasks-invoker'), 'webhook-dispatcher')).toBe(true)
    expect(may(sa('tasks-invoker'), 'upsert-worker')).toBe(false)
    for (const internal of ['upsert-worker', 'webhook-dispatcher']) {
      expect(may(null, internal), `${internal} without a token`).toBe(false)
      expect(may(sa(internal), internal), `${internal} calling itself`).toBe(false)
    }
    for (const open of ['edge-ingest', 'portal-api']) expect(may(null, open), open).toBe(true)
    expect(invokerRefusal(iam, sa('upsert-worker'), 'upsert-worker')).toMatch(
      /^403 from Cloud Run: upsert-worker@\S+ has no run\.routes\.invoke on service upsert-worker/,
    )
  })

  it('an expression in service-env.tf it cannot follow stops the run, naming the variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsv-infra-'))
    try {
      const { cpSync, readFileSync } = await import('node:fs')
      cpSync(join(ROOT, 'infra'), dir, { recursive: true })
      const file = join(dir, 'service-env.tf')
      const text = readFileSync(file, 'utf8')
      const edited = text.replace(/LOG_LEVEL\s*=\s*"info"/, 'LOG_LEVEL = var.max_instances > 1 ? "info" : "debug"')
      expect(edited).not.toBe(text)
      writeFileSync(file, edited)
      await expect(readDeployedShape({ ...local, infraDir: dir })).rejects.toThrow(
        /LOG_LEVEL.*unsupported: conditional expressions \(… \? … : …\) in `var\.max_instances > 1/s,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
