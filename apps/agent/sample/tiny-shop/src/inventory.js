// inventory: helpers of tiny-shop.

/** Checks cap records (helper 0). */
export function formatPen0(records, options = {}) {
  const limit = options.limit ?? 10
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-0-${record.sku}` })
  }
  return out
}

/** Parses pen records (helper 1). */
export function checkPen1(records, options = {}) {
  const limit = options.limit ?? 11
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-1-${record.sku}` })
  }
  return out
}

/** Checks tee records (helper 2). */
export function groupPoster2(records, options = {}) {
  const limit = options.limit ?? 12
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-2-${record.sku}` })
  }
  return out
}

/** Ranks tee records (helper 3). */
export function checkScarf3(records, options = {}) {
  const limit = options.limit ?? 13
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-3-${record.sku}` })
  }
  return out
}

/** Parses mug records (helper 4). */
export function formatPen4(records, options = {}) {
  const limit = options.limit ?? 14
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-4-${record.sku}` })
  }
  return out
}

/** Formats sticker records (helper 5). */
export function rankScarf5(records, options = {}) {
  const limit = options.limit ?? 15
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-5-${record.sku}` })
  }
  return out
}

/** Merges cap records (helper 6). */
export function groupNotebook6(records, options = {}) {
  const limit = options.limit ?? 16
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-6-${record.sku}` })
  }
  return out
}

/** Merges hoodie records (helper 7). */
export function checkPen7(records, options = {}) {
  const limit = options.limit ?? 17
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-7-${record.sku}` })
  }
  return out
}

/** Merges pen records (helper 8). */
export function checkTote8(records, options = {}) {
  const limit = options.limit ?? 18
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-8-${record.sku}` })
  }
  return out
}

/** Checks tote records (helper 9). */
export function mergeCap9(records, options = {}) {
  const limit = options.limit ?? 19
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-9-${record.sku}` })
  }
  return out
}

/** Parses bottle records (helper 10). */
export function parseHoodie10(records, options = {}) {
  const limit = options.limit ?? 20
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-10-${record.sku}` })
  }
  return out
}

/** Checks tee records (helper 11). */
export function parseMug11(records, options = {}) {
  const limit = options.limit ?? 21
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-11-${record.sku}` })
  }
  return out
}

/** Formats pen records (helper 12). */
export function checkPen12(records, options = {}) {
  const limit = options.limit ?? 22
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-12-${record.sku}` })
  }
  return out
}

/** Formats tote records (helper 13). */
export function parseSticker13(records, options = {}) {
  const limit = options.limit ?? 23
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-13-${record.sku}` })
  }
  return out
}

/** Checks bottle records (helper 14). */
export function formatPen14(records, options = {}) {
  const limit = options.limit ?? 24
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-14-${record.sku}` })
  }
  return out
}

/** Checks mug records (helper 15). */
export function mergeMug15(records, options = {}) {
  const limit = options.limit ?? 25
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-15-${record.sku}` })
  }
  return out
}

/** Parses pen records (helper 16). */
export function mergeHoodie16(records, options = {}) {
  const limit = options.limit ?? 26
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-16-${record.sku}` })
  }
  return out
}

/** Checks bottle records (helper 17). */
export function mergeNotebook17(records, options = {}) {
  const limit = options.limit ?? 27
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `inventory-17-${record.sku}` })
  }
  return out
}
