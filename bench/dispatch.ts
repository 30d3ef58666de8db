/**
 * Dispatch benchmark (`npm run bench:dispatch`): deliveries per second through the embedded
 * task scheduler to a loopback receiver — signing, a schema-shaped WebhookEventV2 body and the
 * delivery-log write included — against a bare undici Pool loop that signs and posts the same
 * bodies. Both keep 50 requests in flight. After BENCH_WARMUP_ROUNDS (1) uncounted rounds of both,
 * each round runs both; the order alternates (platform then bare in even rounds, bare then platform
 * in odd ones) so machine noise hits both; the medians and the median of the per-round ratios are
 * printed (goal: >= 70%), and the same ratio of CPU time per delivery (process CPU, receiver
 * included), which moves less than rates when other work shares the machine. Each timed run
 * starts on an idle process (bench/lib/quiet.ts: the platform's set-up writes checkpointed, the
 * other side's leftovers done) and its CPU is counted until the process is idle again.
 * BENCH_CPU_PROFILE=<folder> writes a CPU profile of each platform round's timed section.
 * BENCH_TRACE_EXPORTER=file (or otlp, cloud-trace) runs the platform side with OpenTelemetry on, as
 * a deployed process runs (platform/telemetry.ts; the file exporter writes to the bench's data
 * folder), every delivery sampled: issue 28's figure "with tracing on". The bare loop stays
 * untraced (its requests run with tracing suppressed).
 *
 * `--deployed` (issue 30 item 2, docs/capacity.md "Per million deliveries"): the delivery log and
 * the tenant store on Firestore (the emulator of FIRESTORE_EMULATOR_HOST, else one started here
 * and stopped by pid), as infra/ deploys the dispatcher, and each attempt run as `POST
 * /tasks/deliver` runs it: the delivery handler called with the task's payload, 50 in flight (the
 * deliveries' tasks are captured when created, not scheduled: Cloud Tasks would push them). What
 * the route adds around the handler (fastify, the caller check) is left out on this side; the bare
 * loop is unchanged.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { Pool } from 'undici'
import { loadConfig } from '../shared/src/config/config.ts'
import { createPlatformDeps } from '../shared/src/platform/deps.ts'
import { contactIdFor } from '../shared/src/model/ids.ts'
import type { ContactRecord } from '../shared/src/model/records.ts'
import { assembleContact } from '../shared/src/domain/contacts/assemble.ts'
import { buildWebhookEventV2 } from '../shared/src/domain/webhooks/build-event.ts'
import { createDelivery } from '../shared/src/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '../shared/src/domain/webhooks/deliver.ts'
import { signatureHeaders } from '../shared/src/domain/webhooks/signing.ts'
import { sectionProfiler } from './lib/section-profile.ts'
import { fullGc, processCpuUs, quietFrom } from './lib/quiet.ts'
import { mainThreadMeter, noUse, type MainThreadUse } from './lib/main-thread.ts'
import { startTelemetry, stopTelemetry } from '../shared/src/platform/telemetry.ts'
import { untraced } from '../shared/src/logging/trace-propagation.ts'
import { benchEmulators } from './lib/emulators.ts'
import { makeBenchAccount } from './lib/bench-tenant.ts'
import { capturingTasks, eachInFlight, makeBenchIntegration, startBenchReceiver } from './lib/delivery-bench.ts'
import { median, range } from './lib/rounds.ts'

const N = Number(process.env.BENCH_DELIVERIES ?? 1500)
/**
 * 7 rounds: on this 2-core machine the bare loop alone moved between 2,139 and 3,275/s from one
 * round to the next, and a 3-round median of the same tree read 63.4 % and 88.1 % in two runs
 * (docs/performance.md, "Part A's rounds, and the dispatch's"); the rounds' range is printed.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
/** uncounted rounds of both sides first: the first run of either pays its JIT (about twice the CPU per delivery) */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1)
const IN_FLIGHT = 50
/** `--deployed`: the stores on Firestore, attempts run as Cloud Tasks' pushes run them */
const DEPLOYED = process.argv.includes('--deployed')

/** BENCH_CPU_PROFILE=<folder>: a CPU profile of each platform round's timed section (not its set-up) */
const section = sectionProfiler()

/** CPU µs per delivery of each side's last timed run, up to the process being idle again (quietFrom) */
const cpuPer = { platform: 0, bare: 0 }
/** the main thread's event-loop utilization in each side's last timed run: near 1, the side is bound by the main thread's CPU */
const mainThread: Record<'platform' | 'bare', MainThreadUse> = { platform: noUse, bare: noUse }

async function main() {
  console.log(
    `bench:dispatch (${N} deliveries x ${ROUNDS} rounds, ${IN_FLIGHT} in flight, node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})`,
  )
  const receiver = await startBenchReceiver()
  const { origin, url } = receiver

  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-dispatch-'))
  const traceExporter = process.env.BENCH_TRACE_EXPORTER
  if (traceExporter) {
    const ratio = process.env.BENCH_TRACE_SAMPLE_RATIO ?? '1'
    await startTelemetry('bench-dispatch', { TRACE_EXPORTER: traceExporter, DATA_DIR: dir, TRACE_SAMPLE_RATIO: ratio })
    console.log(`tracing on: platform deliveries sampled at TRACE_SAMPLE_RATIO ${ratio}, spans exported by ${traceExporter}`)
  }
  const project = process.env.EMULATOR_PROJECT ?? 'demo-lsv-test'
  const emulators = DEPLOYED ? await benchEmulators(['firestore'], project) : null
  if (emulators) {
    process.env.FIRESTORE_EMULATOR_HOST = emulators.firestore
    process.env.METADATA_SERVER_DETECTION ??= 'none'
    console.log(`deployed shape: the stores on the Firestore emulator ${emulators.firestore}`)
  }
  // the per-endpoint rate limit is lifted: this measures the delivery pipeline's own cost
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dir,
    STORE_BACKEND: DEPLOYED ? 'firestore' : 'embedded',
    QUEUE_BACKEND: 'embedded',
    ALLOW_LOOPBACK_WEBHOOKS: 'true',
    WEBHOOK_ENDPOINT_RATE: '100000',
    ...(emulators ? { GOOGLE_CLOUD_PROJECT: project, FIRESTORE_EMULATOR_HOST: emulators.firestore! } : {}),
  })
  const captured = DEPLOYED ? capturingTasks() : null
  const deps = await createPlatformDeps(config, pino({ level: 'silent' }), captured ? { tasks: captured } : {})
  const now = new Date().toISOString()
  const accountId = randomUUID()
  await makeBenchAccount(deps, accountId, now)
  const { integrationId, secret } = await makeBenchIntegration(deps, accountId, url, now)

  const record: ContactRecord = {
    id: contactIdFor(accountId, 'crm', 'bench'),
    account_id: accountId,
    source: 'crm',
    external_id: 'bench',
    subject_type: 'contact',
    identity: { first_name: 'Jane', last_name: 'Doe', full_name: 'Jane Doe', title: 'CTO' },
    company: { name: 'Acme', domain: 'acme.example', website: 'https://acme.example' },
    location: { city: 'Lyon' },
    business_email: 'jane@acme.example',
    emails: [{ value: 'jane@home.example', kind: 'personal', verified: true }],
    phones: [{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true }],
    traits: [],
    custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
    name_source: 'form',
    resolved_by: 'v',
    first_seen_at: now,
    last_seen_at: now,
    updated_at: now,
    versions: {},
  }
  const { contact, fieldPolicy } = assembleContact(record, {
    permittedTiers: [1, 2, 3],
    contactHandles: true,
    sensitiveTraits: false,
    mappedCustomFieldKeys: null,
    portalBaseUrl: config.portalBaseUrl,
    definitions: [{ account_id: accountId, key: 'plan', label: 'Plan', type: 'select', created_at: now }],
  })
  const bodyFor = (id: string) =>
    JSON.stringify(
      buildWebhookEventV2({
        event: { id, account_id: accountId, tier: 'person', visit: { captured_url: 'https://shop.example/p' } },
        subject: contact,
        fieldPolicy,
        isRepeat: false,
        emittedAt: now,
      }),
    )

  // platform: deliveries pre-created (record + task); timed from scheduler start to the last log write
  const handler = createDeliveryTaskHandler(deps)
  let round = 0
  async function platformRound(): Promise<number> {
    round++
    for (let i = 0; i < N; i++) {
      // each created at its own time, as the platform creates a visit's deliveries (one `now` for
      // all 1,500 put every status change of an attempt on a random page of the delivery log's
      // status index: 2.5 WAL frames per attempt's record write instead of 1; docs/performance.md,
      // "Fifth pass")
      const createdAt = new Date().toISOString()
      await createDelivery(deps, { accountId, integrationId, eventId: `evt_${round}_${i}`, body: bodyFor(`evt_${round}_${i}`), now: createdAt })
    }
    if (captured) {
      const payloads = captured.taken()
      fullGc() // the last runs' garbage collected now, not during this one
      await quietFrom() // the set-up's writes settled first: they are not this run's
      return section(`dispatch-platform-round-${round}`, async () => {
        const started = performance.now()
        const cpuStart = processCpuUs()
        const meter = mainThreadMeter()
        await eachInFlight(payloads, IN_FLIGHT, async (payload) => {
          const outcome = await handler(payload)
          if (outcome !== 'succeeded') throw new Error(`a delivery ended ${outcome}`)
        })
        const rate = (N * 1000) / (performance.now() - started)
        mainThread.platform = meter.per(N)
        cpuPer.platform = ((await quietFrom()) - cpuStart) / N
        return rate
      })
    }
    fullGc() // the last runs' garbage collected now, not during this one
    await quietFrom() // the set-up's writes settled first (their WAL checkpoints): they are not this run's
    return section(`dispatch-platform-round-${round}`, async () => {
      let done = 0
      let resolveAll!: () => void
      const all = new Promise<void>((r) => (resolveAll = r))
      const started = performance.now()
      const cpuStart = processCpuUs()
      const meter = mainThreadMeter()
      const runner = await deps.tasks.start(async (payload) => {
        await handler(payload)
        if (++done === N) resolveAll()
      })
      await all
      const elapsed = performance.now() - started
      mainThread.platform = meter.per(N)
      await runner.close()
      // charged until the process is idle again: its checkpoints and spans still to export are its own
      cpuPer.platform = ((await quietFrom()) - cpuStart) / N
      return (N * 1000) / elapsed
    })
  }

  const pool = new Pool(origin, { connections: IN_FLIGHT, pipelining: 1 })
  async function bareRound(): Promise<number> {
    round++
    const bodies = Array.from({ length: N }, (_, i) => ({ id: `evt_${round}_${i}`, body: Buffer.from(bodyFor(`evt_${round}_${i}`)) }))
    fullGc()
    await quietFrom()
    return section(`dispatch-bare-round-${round}`, () => bareTimed(bodies))
  }
  async function bareTimed(bodies: Array<{ id: string; body: Buffer }>): Promise<number> {
    const started = performance.now()
    const cpuStart = processCpuUs()
    const meter = mainThreadMeter()
    // untraced whether or not tracing is on: the control is bare undici
    await untraced(() =>
      eachInFlight(bodies, IN_FLIGHT, async (b) => {
        const headers = signatureHeaders([secret], b.id, Date.now(), b.body) as unknown as Record<string, string>
        const res = await pool.request({ path: '/hook', method: 'POST', body: b.body, headers: { 'content-type': 'application/json', ...headers } })
        await res.body.text()
      }),
    )
    const rate = (N * 1000) / (performance.now() - started)
    mainThread.bare = meter.per(N)
    cpuPer.bare = ((await quietFrom()) - cpuStart) / N
    return rate
  }

  const platform: number[] = []
  /** per round: bare CPU per delivery / platform CPU per delivery (the CPU-time counterpart of the ratio) */
  const cpu: number[] = []
  const bare: number[] = []
  for (let w = 0; w < WARMUP_ROUNDS; w++) {
    const p = await platformRound()
    const b = await bareRound()
    console.log(
      `warm-up ${w + 1} (not counted): platform ${p.toFixed(0)}/s, bare ${b.toFixed(0)}/s; CPU per delivery platform ${cpuPer.platform.toFixed(0)} µs, bare ${cpuPer.bare.toFixed(0)} µs`,
    )
  }
  const deadline = Date.now() + 100_000
  for (let r = 0; r < ROUNDS && Date.now() < deadline; r++) {
    // even rounds run the platform first, odd rounds the bare loop first: whatever the first run of
    // a round pays (a colder receiver, a GC of the other's garbage) falls on each side in turn
    const platformFirst = r % 2 === 0
    let p: number
    let b: number
    if (platformFirst) {
      p = await platformRound()
      b = await bareRound()
    } else {
      b = await bareRound()
      p = await platformRound()
    }
    platform.push(p)
    cpu.push(cpuPer.bare / cpuPer.platform)
    bare.push(b)
    console.log(
      `round ${r + 1} (${platformFirst ? 'platform first' : 'bare first'}): platform ${p.toFixed(0)}/s, bare ${b.toFixed(0)}/s, ratio ${((100 * p) / b).toFixed(1)}%; CPU per delivery platform ${cpuPer.platform.toFixed(0)} µs, bare ${cpuPer.bare.toFixed(0)} µs; main thread per delivery: platform ${mainThread.platform.text}, bare ${mainThread.bare.text}`,
    )
  }
  const p = median(platform)
  const b = median(bare)
  // the figure is the median of the per-round ratios: a round's two runs share the machine's mood
  const ratios = platform.map((x, i) => x / bare[i]!)
  const ratio = median(ratios)
  console.log(
    `dispatch: platform median ${p.toFixed(0)} deliveries/s, bare undici median ${b.toFixed(0)}/s, ratio ${(100 * ratio).toFixed(1)}% (median of per-round ratios; ${DEPLOYED ? 'deployed shape: information, the goal is for the embedded one' : `goal >= 70%: ${ratio >= 0.7 ? 'met' : 'NOT MET'}`}; ${range(ratios, (x) => (100 * x).toFixed(1))}%), ${N} deliveries x ${platform.length} rounds, ${IN_FLIGHT} in flight`,
  )
  console.log(
    `dispatch, CPU time: bare CPU per delivery / platform CPU per delivery ${(100 * median(cpu)).toFixed(1)}% (median of per-round ratios; information: the process's CPU time, receiver included, moves less with the machine's load than rates do)`,
  )

  await pool.close()
  await deps.close()
  await emulators?.stop()
  await stopTelemetry()
  receiver.close()
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

await main()
