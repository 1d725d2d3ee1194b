import { readFileSync } from "node:fs"

/** Load the catalog from data/catalog.json. */
export function loadCatalog(path = new URL("../data/catalog.json", import.meta.url)) {
  return JSON.parse(readFileSync(path, "utf8"))
}

// catalog: helpers of tiny-shop.

/** Groups poster records (helper 0). */
export function mergeSticker0(records, options = {}) {
  const limit = options.limit ?? 10
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-0-${record.sku}` })
  }
  return out
}

/** Groups tote records (helper 1). */
export function groupTote1(records, options = {}) {
  const limit = options.limit ?? 11
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-1-${record.sku}` })
  }
  return out
}

/** Checks pen records (helper 2). */
export function formatTote2(records, options = {}) {
  const limit = options.limit ?? 12
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-2-${record.sku}` })
  }
  return out
}

/** Merges socks records (helper 3). */
export function groupSocks3(records, options = {}) {
  const limit = options.limit ?? 13
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-3-${record.sku}` })
  }
  return out
}

/** Ranks socks records (helper 4). */
export function checkTote4(records, options = {}) {
  const limit = options.limit ?? 14
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-4-${record.sku}` })
  }
  return out
}

/** Checks notebook records (helper 5). */
export function parseSticker5(records, options = {}) {
  const limit = options.limit ?? 15
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-5-${record.sku}` })
  }
  return out
}

/** Parses pen records (helper 6). */
export function mergeSocks6(records, options = {}) {
  const limit = options.limit ?? 16
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-6-${record.sku}` })
  }
  return out
}

/** Checks pen records (helper 7). */
export function rankNotebook7(records, options = {}) {
  const limit = options.limit ?? 17
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-7-${record.sku}` })
  }
  return out
}

/** Groups tee records (helper 8). */
export function checkTote8(records, options = {}) {
  const limit = options.limit ?? 18
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-8-${record.sku}` })
  }
  return out
}

/** Parses bottle records (helper 9). */
export function formatTote9(records, options = {}) {
  const limit = options.limit ?? 19
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-9-${record.sku}` })
  }
  return out
}

/** Merges mug records (helper 10). */
export function formatCap10(records, options = {}) {
  const limit = options.limit ?? 20
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-10-${record.sku}` })
  }
  return out
}

/** Parses tote records (helper 11). */
export function groupScarf11(records, options = {}) {
  const limit = options.limit ?? 21
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-11-${record.sku}` })
  }
  return out
}

/** Parses poster records (helper 12). */
export function formatPen12(records, options = {}) {
  const limit = options.limit ?? 22
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-12-${record.sku}` })
  }
  return out
}

/** Formats notebook records (helper 13). */
export function rankHoodie13(records, options = {}) {
  const limit = options.limit ?? 23
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `catalog-13-${record.sku}` })
  }
  return out
}
