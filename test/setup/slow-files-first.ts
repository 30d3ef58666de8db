import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { relative } from 'node:path'

/**
 * The files that took longest in the last full quiet run (seconds, vitest's time per file in
 * `npm test`, main at 98a64dc, 2 cores, two files at a time), except where a file changed since:
 * the axe walk (205 s then) is now two files, each half its screens plus its own set-up (a
 * stack, an account, a browser: about 15 s), so about 110 s each; start-cloud's broken-wiring
 * stacks now start together: 131 s before and 94 s after on a loaded machine (load 10–20), so
 * about 70 s of its 99 s; webhook-receivers' three 15 s waits run together (46 s before, 16 s
 * after at load 9–10); the black-box suite now also runs the access-change cases of
 * stacks-in-force (38 s then, most of it its own two stacks' start) on its stacks: about 50 s;
 * docs-commands (56 s then) reads gcloud's command tree instead of ~25 help pages: 110 s → 28 s
 * at load 2 and 8, so no longer among them.
 * They start first: with two files at a time, a slow file started last leaves one worker idle
 * while it ends, and on a clean clone vitest has no duration cache to order by (it falls back to
 * file size, which says little: a short file can start a whole stack and a browser).
 * Ordered by figure; test/setup/slow-files-first.test.ts checks that each one exists.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/reliability/crash-safety.test.ts': 116,
  'test/browser/axe-every-screen-first-half.test.ts': 110,
  'test/browser/axe-every-screen-second-half.test.ts': 108,
  'test/cloud/start-cloud.test.ts': 70,
  'test/cloud/worker-kill.test.ts': 55,
  'test/browser/portal.test.ts': 53,
  'test/blackbox/stacks.test.ts': 50,
  'test/browser/branding.test.ts': 44,
  'test/local/start-local.test.ts': 43,
  'test/browser/endpoints.test.ts': 41,
  'test/browser/delivery-debugger.test.ts': 35,
  'test/reliability/dependency-stall.test.ts': 30,
  'test/local/background-threads.test.ts': 30,
  'test/browser/mapping.test.ts': 29,
  'test/reliability/dispatcher-outage.test.ts': 28,
  'test/browser/portal-small-defects.test.ts': 27,
  'test/cloud/dead-letter-alert.test.ts': 25,
  'test/management/provisioning.test.ts': 24,
  'test/browser/focus-after-forms.test.ts': 23,
  'test/infra/image-start.test.ts': 22,
  'test/cloud/traces.test.ts': 21,
  'test/browser/overview.test.ts': 20,
  'test/http/anonymous-routes.test.ts': 19,
  'test/deactivation/deactivation.test.ts': 19,
  'test/conformance/queue.test.ts': 18,
  'test/browser/reload-once.test.ts': 18,
  'test/browser/inbound-debugger.test.ts': 18,
  'test/browser/how-to-send-and-return.test.ts': 17,
  'test/architecture/layers.test.ts': 16,
  'test/reliability/webhook-receivers.test.ts': 16,
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
