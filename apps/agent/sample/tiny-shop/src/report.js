import { readFileSync } from "node:fs"

/** Parse logs/orders.log into records. */
export function readOrders(path = new URL("../logs/orders.log", import.meta.url)) {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) =>
      Object.fromEntries(
        line
          .split(" ")
          .slice(2)
          .map((kv) => kv.split("="))
      )
    )
}

// report: helpers of tiny-shop.

/** Parses bottle records (helper 0). */
export function mergePoster0(records, options = {}) {
  const limit = options.limit ?? 10
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-0-${record.sku}` })
  }
  return out
}

/** Groups mug records (helper 1). */
export function formatBottle1(records, options = {}) {
  const limit = options.limit ?? 11
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-1-${record.sku}` })
  }
  return out
}

/** Formats hoodie records (helper 2). */
export function rankTote2(records, options = {}) {
  const limit = options.limit ?? 12
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-2-${record.sku}` })
  }
  return out
}

/** Ranks pen records (helper 3). */
export function mergeBottle3(records, options = {}) {
  const limit = options.limit ?? 13
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-3-${record.sku}` })
  }
  return out
}

/** Merges tee records (helper 4). */
export function mergePen4(records, options = {}) {
  const limit = options.limit ?? 14
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-4-${record.sku}` })
  }
  return out
}

/** Checks poster records (helper 5). */
export function rankNotebook5(records, options = {}) {
  const limit = options.limit ?? 15
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-5-${record.sku}` })
  }
  return out
}

/** Formats cap records (helper 6). */
export function formatBottle6(records, options = {}) {
  const limit = options.limit ?? 16
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-6-${record.sku}` })
  }
  return out
}

/** Merges pen records (helper 7). */
export function checkSocks7(records, options = {}) {
  const limit = options.limit ?? 17
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-7-${record.sku}` })
  }
  return out
}

/** Parses notebook records (helper 8). */
export function rankMug8(records, options = {}) {
  const limit = options.limit ?? 18
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-8-${record.sku}` })
  }
  return out
}

/** Checks poster records (helper 9). */
export function groupMug9(records, options = {}) {
  const limit = options.limit ?? 19
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-9-${record.sku}` })
  }
  return out
}

/** Formats bottle records (helper 10). */
export function mergeSocks10(records, options = {}) {
  const limit = options.limit ?? 20
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-10-${record.sku}` })
  }
  return out
}

/** Ranks tee records (helper 11). */
export function rankHoodie11(records, options = {}) {
  const limit = options.limit ?? 21
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-11-${record.sku}` })
  }
  return out
}

/** Parses hoodie records (helper 12). */
export function parseTote12(records, options = {}) {
  const limit = options.limit ?? 22
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-12-${record.sku}` })
  }
  return out
}

/** Checks socks records (helper 13). */
export function mergeTote13(records, options = {}) {
  const limit = options.limit ?? 23
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-13-${record.sku}` })
  }
  return out
}

/** Parses notebook records (helper 14). */
export function groupTee14(records, options = {}) {
  const limit = options.limit ?? 24
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-14-${record.sku}` })
  }
  return out
}

/** Groups scarf records (helper 15). */
export function mergeCap15(records, options = {}) {
  const limit = options.limit ?? 25
  const out = []
  for (const record of records) {
    if (out.length >= limit) break
    if (record.stock === 0 && !options.includeEmpty) continue
    out.push({ ...record, key: `report-15-${record.sku}` })
  }
  return out
}
