/**
 * The hash chain: the unkeyed form is byte-compatible with earlier releases (a pinned vector, computed
 * by the release before the key existed), and the keyed (HMAC) form cannot be recomputed by someone
 * who edits an event without the key.
 */
import { createHash, createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { EventHash } from "../src/index.js"

const record = (version: number, data: string): EventHash.HashedRecord => ({
  stream: "conv-1",
  version,
  eventId: `018f3c2a-7b4e-7c1d-9e2f-3a4b5c6d7e8${version}`,
  type: "MessageAppended",
  schemaVersion: 1,
  data
})

const records = [record(1, '{"text":"héllo"}'), record(2, '{"text":"run the tests"}'), record(3, '{"text":"done"}')]

/** Hash each record onto the previous one, as a store does on append. */
const linked = (items: ReadonlyArray<EventHash.HashedRecord>, key?: EventHash.ChainKey) => {
  let previous = EventHash.genesis
  return items.map((item) => {
    previous = EventHash.chain(previous, item, key)
    return { ...item, hash: previous }
  })
}

const layout = (previous: string, item: EventHash.HashedRecord): string =>
  [previous, item.stream, String(item.version), item.eventId, item.type, String(item.schemaVersion), item.data].join(
    "\u001f"
  )

describe("EventHash", () => {
  it("the unkeyed chain is unchanged: a pinned vector and the documented layout", () => {
    const first = { ...record(1, '{"text":"héllo"}'), eventId: "018f3c2a-7b4e-7c1d-9e2f-3a4b5c6d7e8f" }
    // Computed by the unkeyed-only EventHash of commit dc53141.
    assert.strictEqual(
      EventHash.chain(EventHash.genesis, first),
      "4f9250790eb092a290bee4c0ea454073a444feddcb14242552ffc1ff276dfafe"
    )
    for (const item of linked(records)) {
      const previous = item.version === 1 ? EventHash.genesis : (linked(records)[item.version - 2]?.hash ?? "")
      assert.strictEqual(item.hash, createHash("sha256").update(layout(previous, item)).digest("hex"))
    }
    assert.isTrue(EventHash.verify(linked(records)).ok)
  })

  it("a keyed link is the HMAC-SHA256 of the same bytes, and a string key equals its UTF-8 bytes", () => {
    const key = "chain-key-🔑"
    const keyed = EventHash.chain(EventHash.genesis, records[0] ?? record(1, ""), key)
    assert.strictEqual(
      keyed,
      createHmac("sha256", key)
        .update(layout(EventHash.genesis, records[0] ?? record(1, "")))
        .digest("hex")
    )
    assert.notStrictEqual(keyed, EventHash.chain(EventHash.genesis, records[0] ?? record(1, "")))
    assert.strictEqual(
      EventHash.chain(EventHash.genesis, records[0] ?? record(1, ""), new TextEncoder().encode(key)),
      keyed
    )
  })

  it("an edit recomputed without the key does not verify under the key", () => {
    const key = "the-real-key"
    const stored = linked(records, key)
    assert.deepStrictEqual(EventHash.verify(stored, key), { ok: true, head: stored[2]?.hash ?? "" })
    // The attacker rewrites event 2 and recomputes every later link, unkeyed or with a guessed key.
    const edited = records.map((item) => (item.version === 2 ? { ...item, data: '{"text":"rm -rf /"}' } : item))
    for (const forged of [linked(edited), linked(edited, "a-guessed-key")]) {
      const result = EventHash.verify(forged, key)
      assert.isFalse(result.ok)
      if (!result.ok) assert.strictEqual(result.version, 1)
    }
    // Keeping the untouched prefix does not help: the first edited link breaks.
    const spliced = [stored[0], ...linked(edited, "a-guessed-key").slice(1)].flatMap((item) =>
      item === undefined ? [] : [item]
    )
    const result = EventHash.verify(spliced, key)
    assert.isFalse(result.ok)
    if (!result.ok) assert.strictEqual(result.version, 2)
    // Unkeyed verification of a keyed chain fails too: the two are never confused.
    assert.isFalse(EventHash.verify(stored).ok)
    // Whoever holds the key can write a consistent chain (the key is the trust boundary).
    assert.isTrue(EventHash.verify(linked(edited, key), key).ok)
  })

  it("heads and seals: unkeyed forms unchanged; keyed forms name the key without revealing it", () => {
    const key = "the-real-key"
    const hash = linked(records)[2]?.hash ?? ""
    const at = { stream: "conv-1", version: 3, hash }
    assert.strictEqual(EventHash.formatHead(at), hash)
    assert.deepStrictEqual(EventHash.parseHead(hash), { hash, keyId: undefined, seal: undefined })
    const keyed = EventHash.formatHead(at, key)
    const seal = EventHash.headSeal(at, key)
    assert.strictEqual(keyed, `hmac-sha256:${EventHash.keyId(key)}:${hash}:${seal}`)
    assert.deepStrictEqual(EventHash.parseHead(keyed), { hash, keyId: EventHash.keyId(key), seal })
    assert.notInclude(keyed, key)
    // The row's seal covers where the head stands: the same hash at another version does not match.
    assert.notStrictEqual(EventHash.headSeal({ ...at, version: 2 }, key), seal)
    assert.notStrictEqual(EventHash.headSeal({ ...at, stream: "conv-2" }, key), seal)
    assert.notStrictEqual(EventHash.keyId(key), EventHash.keyId("another"))
    assert.isUndefined(EventHash.keyProblem(undefined, undefined))
    assert.isUndefined(EventHash.keyProblem(EventHash.keyId(key), key))
    assert.include(EventHash.keyProblem(EventHash.keyId(key), "another") ?? "", "another key")
    assert.include(EventHash.keyProblem(EventHash.keyId(key), undefined) ?? "", "HMAC-keyed")
    assert.include(EventHash.keyProblem(undefined, key) ?? "", "without an HMAC key")
    const snapshot = {
      stream: "conv-1",
      projection: "window",
      projectionVersion: 2,
      version: 3,
      anchor: hash,
      state: '{"version":3}'
    }
    // Unkeyed: the SHA-256 of the state, as snapshots were hashed before.
    assert.strictEqual(EventHash.seal(snapshot), createHash("sha256").update(snapshot.state).digest("hex"))
    const sealed = EventHash.seal(snapshot, key)
    assert.isTrue(sealed.startsWith(`hmac-sha256:${EventHash.keyId(key)}:`))
    // The seal covers the state, the anchor (the event it ends at) and where it sits.
    for (const changed of [
      { ...snapshot, state: '{"version":4}' },
      { ...snapshot, anchor: EventHash.genesis },
      { ...snapshot, version: 4 },
      { ...snapshot, stream: "conv-2" }
    ]) {
      assert.notStrictEqual(EventHash.seal(changed, key), sealed)
    }
    assert.notStrictEqual(EventHash.seal(snapshot, "another"), sealed)
  })

  it("verifyFrom checks a tail from the hash of the event before it", () => {
    const key = "k"
    const stored = linked(records, key)
    const tail = stored.slice(1)
    assert.isTrue(EventHash.verifyFrom(stored[0]?.hash ?? "", tail, key).ok)
    const result = EventHash.verifyFrom(EventHash.genesis, tail, key)
    assert.isFalse(result.ok)
    if (!result.ok) assert.strictEqual(result.version, 2)
  })
})
