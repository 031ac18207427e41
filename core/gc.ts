/**
 * A full garbage collection between the slices of a big log, where the runtime offers one
 * (V8's `--expose-gc`, which every task that runs Chronicle passes); elsewhere nothing.
 *
 * Why: V8 lets a heap grow well past what is live before it collects, and a big log's slices
 * leave a slice's garbage each (its lines, records, rows and payload buffers), in the import
 * worker and in the thread that stores them. One 202 MiB session in 12 MiB slices peaked at
 * 317-355 MB without, 232-234 MB with a collection in both after each slice (8 MiB slices:
 * 285-288 MB with one in the worker alone); a log that fits one pass (nearly every log) never
 * calls it.
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
