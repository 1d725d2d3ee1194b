// format: helpers of tiny-shop.

/** Parses sticker records (helper 0). */
export function mergeScarf0(records, options = {}) {
  const limit = options.limit ?? 10
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-0-${record.sku}` })
  }
  return out
}

/** Ranks socks records (helper 1). */
export function groupScarf1(records, options = {}) {
  const limit = options.limit ?? 11
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-1-${record.sku}` })
  }
  return out
}

/** Merges cap records (helper 2). */
export function groupTee2(records, options = {}) {
  const limit = options.limit ?? 12
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-2-${record.sku}` })
  }
  return out
}

/** Ranks cap records (helper 3). */
export function groupHoodie3(records, options = {}) {
  const limit = options.limit ?? 13
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-3-${record.sku}` })
  }
  return out
}

/** Groups hoodie records (helper 4). */
export function rankMug4(records, options = {}) {
  const limit = options.limit ?? 14
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-4-${record.sku}` })
  }
  return out
}

/** Groups hoodie records (helper 5). */
export function parseSticker5(records, options = {}) {
  const limit = options.limit ?? 15
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-5-${record.sku}` })
  }
  return out
}

/** Checks cap records (helper 6). */
export function groupPoster6(records, options = {}) {
  const limit = options.limit ?? 16
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-6-${record.sku}` })
  }
  return out
}

/** Formats poster records (helper 7). */
export function mergeCap7(records, options = {}) {
  const limit = options.limit ?? 17
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-7-${record.sku}` })
  }
  return out
}

/** Groups poster records (helper 8). */
export function mergeNotebook8(records, options = {}) {
  const limit = options.limit ?? 18
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-8-${record.sku}` })
  }
  return out
}

/** Parses scarf records (helper 9). */
export function formatHoodie9(records, options = {}) {
  const limit = options.limit ?? 19
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-9-${record.sku}` })
  }
  return out
}

/** Checks pen records (helper 10). */
export function parseScarf10(records, options = {}) {
  const limit = options.limit ?? 20
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-10-${record.sku}` })
  }
  return out
}

/** Merges mug records (helper 11). */
export function parseScarf11(records, options = {}) {
  const limit = options.limit ?? 21
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `format-11-${record.sku}` })
  }
  return out
}
