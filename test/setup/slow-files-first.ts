import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { relative } from 'node:path'

/**
 * The files that took longest in the last full quiet run (seconds, vitest's time per file in
 * `npm test`, main at 6cdc769, 2026-11-29 01:11–01:29 UTC, load 2.4 at its start, 2 cores, two
 * files at a time): after the browser files shared one stack and one Chromium, docs-commands read
 * gcloud's command tree and crash-safety stopped re-reading every contact while it waits.
 * They start first: with two files at a time, a slow file started last leaves one worker idle
 * while it ends, and on a clean clone vitest has no duration cache to order by (it falls back to
 * file size, which says little: a short file can start a whole stack and a browser).
 * Ordered by figure; test/setup/slow-files-first.test.ts checks that each one exists.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/reliability/crash-safety.test.ts': 259,
  'test/browser/axe-every-screen-second-half.test.ts': 116,
  'test/browser/axe-every-screen-first-half.test.ts': 111,
  'test/cloud/worker-kill.test.ts': 109,
  'test/cloud/start-cloud.test.ts': 95,
  'test/blackbox/stacks.test.ts': 75,
  'test/local/start-local.test.ts': 59,
  'test/local/background-threads.test.ts': 50,
  'test/reliability/dispatcher-outage.test.ts': 39,
  'test/browser/portal.test.ts': 36,
  'test/browser/branding.test.ts': 31,
  'test/reliability/contention.test.ts': 29,
  'test/management/provisioning.test.ts': 26,
  'test/browser/endpoints.test.ts': 25,
  'test/management/cli.test.ts': 23,
  'test/cloud/traces.test.ts': 23,
  'test/infra/image-start.test.ts': 22,
  'test/deploy/production-config.test.ts': 21,
  'test/browser/mapping.test.ts': 21,
  'test/browser/delivery-debugger.test.ts': 20,
  'test/local/run-tests.test.ts': 20,
  'test/openapi-client/client.test.ts': 20,
  'test/reliability/dependency-stall.test.ts': 18,
  'test/conformance/queue.test.ts': 18,
  'test/infra/docs-commands.test.ts': 18,
  'test/architecture/layers.test.ts': 18,
  'test/http/anonymous-routes.test.ts': 16,
  'test/reliability/webhook-receivers.test.ts': 16,
  'test/cloud/dead-letter-alert.test.ts': 15,
  'test/browser/portal-small-defects.test.ts': 15,
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
