/**
 * @ctxlog/compaction
 *
 * @since 0.1.0
 */
export {}
