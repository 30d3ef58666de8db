import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'

/** spans the file keeps when it is cut back (the last ones; roughly the last few hundred traces) */
const KEEP_SPANS = 5000
/** the file is cut back to the last KEEP_SPANS spans once it grows past this */
const MAX_BYTES = 8 * 1024 * 1024

/** One span as a developer reads it: ids, name, who exported it (service, version, instance), times in ISO and milliseconds, attributes. */
function lineOf(span: ReadableSpan): string {
  const startUs = hrTimeToMicroseconds(span.startTime)
  return JSON.stringify({
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    kind: span.kind,
    service: span.resource.attributes['service.name'] ?? null,
    version: span.resource.attributes['service.version'] ?? null,
    instance: span.resource.attributes['service.instance.id'] ?? null,
    start: new Date(startUs / 1000).toISOString(),
    durationMs: hrTimeToMicroseconds(span.duration) / 1000,
    status: span.status.code,
    attributes: span.attributes,
  })
}

/**
 * Without a collector (no OTEL_EXPORTER_OTLP_ENDPOINT, not in Google Cloud) each process keeps its
 * last spans as JSON lines in `DATA_DIR/traces/<process>.jsonl` (docs/operations.md, "Traces"):
 * `grep <trace id>` across the folder gives one trace's spans in every process. The file is
 * appended to and, past MAX_BYTES, rewritten (through a temporary file) with the last KEEP_SPANS
 * spans this process exported, so it stays bounded however long the process runs. Sync writes:
 * the batch processor calls this off the request path, a batch at a time.
 */
export class JsonLinesSpanExporter implements SpanExporter {
  readonly #path: string
  readonly #recent: string[] = []
  #bytes = 0

  constructor(path: string) {
    this.#path = path
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, '') // each run starts the file afresh, so its size is this process's to bound
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      const lines = spans.map(lineOf)
      this.#recent.push(...lines)
      if (this.#recent.length > KEEP_SPANS) this.#recent.splice(0, this.#recent.length - KEEP_SPANS)
      const text = lines.map((l) => `${l}\n`).join('')
      this.#bytes += Buffer.byteLength(text)
      if (this.#bytes > MAX_BYTES) {
        const kept = this.#recent.map((l) => `${l}\n`).join('')
        writeFileSync(`${this.#path}.tmp`, kept)
        renameSync(`${this.#path}.tmp`, this.#path)
        this.#bytes = Buffer.byteLength(kept)
      } else {
        appendFileSync(this.#path, text)
      }
      done({ code: ExportResultCode.SUCCESS })
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error })
    }
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}
