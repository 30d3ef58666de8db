import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { relative } from 'node:path'

/**
 * The files that took longest in the last full quiet run (seconds, `npm test -- --maxWorkers=2`,
 * main at 53dd321, 2 cores; the run's "slowest test files" list and vitest's per-file times).
 * They start first: with two files at a time, a slow file started last leaves one worker idle
 * while it ends, and on a clean clone vitest has no duration cache to order by (it falls back to
 * file size, which says little: a short file can start a whole stack and a browser).
 * Ordered by figure; test/setup/slow-files-first.test.ts checks that each one exists.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/browser/axe-every-screen.test.ts': 141,
  'test/infra/docs-commands.test.ts': 129,
  'test/reliability/crash-safety.test.ts': 120,
  'test/cloud/start-cloud.test.ts': 88,
  'test/browser/portal.test.ts': 68,
  'test/http/anonymous-routes.test.ts': 65,
  'test/cloud/worker-kill.test.ts': 47,
  'test/reliability/webhook-receivers.test.ts': 46,
  'test/browser/branding.test.ts': 46,
  'test/browser/delivery-debugger.test.ts': 41,
  'test/deactivation/stacks-in-force.test.ts': 38,
  'test/reliability/dependency-stall.test.ts': 35,
  'test/reliability/dispatcher-outage.test.ts': 33,
  'test/blackbox/stacks.test.ts': 32,
  'test/local/start-local.test.ts': 32,
  'test/local/background-threads.test.ts': 30,
  'test/management/provisioning.test.ts': 27,
  'test/browser/portal-small-defects.test.ts': 23,
  'test/cloud/traces.test.ts': 22,
  'test/management/cli.test.ts': 20,
  'test/deploy/production-config.test.ts': 19,
  'test/conformance/queue.test.ts': 18,
  'test/browser/endpoints.test.ts': 18,
  'test/browser/mapping.test.ts': 18,
  'test/browser/reload-once.test.ts': 17,
  'test/browser/inbound-debugger.test.ts': 17,
  'test/infra/image-start.test.ts': 17,
  'test/architecture/layers.test.ts': 15,
}

/**
 * vitest's own order (group order first, failed and then longer files first when its cache knows
 * them), except that the known-slow files above go first within their group, slowest first.
 */
export default class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files)
    const seconds = (spec: TestSpecification) => SLOW_FILES[relative(spec.project.config.root, spec.moduleId).split('\\').join('/')] ?? 0
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder
    return base
      .map((spec, at) => ({ spec, at }))
      .sort((a, b) => group(a.spec) - group(b.spec) || seconds(b.spec) - seconds(a.spec) || a.at - b.at)
      .map(({ spec }) => spec)
  }
}
