// LangGraph's own checkpointer tests, run against CtxlogSaver as users get it: this file imports
// `@ctxlog/langgraph` by its package name and runs under `node --test` (node:test, node:assert), both
// from the workspace (test/ported.test.ts, on the sources) and in a project that installed the packed
// tarballs (integration/test/packInstall.langgraph.test.ts). The backend is `CTXLOG_PORT_BACKEND`
// (`sqlite`, the default, a fresh file per case; `postgres`, a fresh database per case made through
// `CTXLOG_PORT_PG_URL`, an admin URL).
//
// Ported from langchain-ai/langgraphjs at commit f8bdf16d4fe23a79e945ea5dc6f86bbf09abb77d (MIT,
// Copyright (c) LangChain, Inc.):
// - libs/checkpoint-sqlite/src/tests/checkpoints.test.ts (`@langchain/langgraph-checkpoint-sqlite`
//   1.0.4, the installed version; the file last changed in f6a6d26b7e69003c4fa052f3cd3319f3e72f0f8f):
//   its five cases, `SqliteSaver.fromConnString(":memory:")` replaced by a fresh CtxlogSaver.
// - libs/checkpoint/src/tests/checkpoints.test.ts (the snapshot's `@langchain/langgraph-checkpoint` is
//   1.1.5, the installed one 1.2.2; the file last changed in c3b27a997c682a64f65904b2a97a5ee4d6e741b0):
//   the five `MemorySaver` cases, `new MemorySaver()` replaced by a fresh CtxlogSaver. Its `Base`,
//   `id` and `channel versions` cases test LangGraph's helpers, not a saver: not ported.
// vitest's `expect` became node:assert (`toEqual` -> deepStrictEqual on the same values, `toMatchObject`
// -> a check of the named keys); the cases and their data are LangGraph's.
import assert from "node:assert/strict"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { after, describe, it } from "node:test"
import { CtxlogSaver } from "@ctxlog/langgraph"
import { HumanMessage } from "@langchain/core/messages"
import { emptyCheckpoint, INTERRUPT, RESUME, TASKS, uuid6 } from "@langchain/langgraph-checkpoint"

const backend = process.env.CTXLOG_PORT_BACKEND ?? "sqlite"
const dir = mkdtempSync(join(tmpdir(), "ctxlog-port-"))
const cleanups = []
after(async () => {
  for (const cleanup of cleanups) await cleanup()
  rmSync(dir, { recursive: true, force: true })
})

/** A fresh, empty CtxlogSaver on the chosen backend (closed, and its database dropped, after the run). */
const freshSaver = async () => {
  if (backend === "postgres") {
    const admin = process.env.CTXLOG_PORT_PG_URL
    if (admin === undefined) throw new Error("CTXLOG_PORT_PG_URL is not set")
    const { default: pg } = await import("pg")
    const name = `ctxlog_port_${randomUUID().replaceAll("-", "").slice(0, 16)}`
    const run = async (sql) => {
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      try {
        await client.query(sql)
      } finally {
        await client.end()
      }
    }
    await run(`create database ${name}`)
    const url = new URL(admin)
    url.pathname = `/${name}`
    const saver = new CtxlogSaver({ postgres: url.toString() })
    cleanups.push(async () => {
      await saver.close()
      await run(`drop database if exists ${name}`)
    })
    return saver
  }
  const saver = new CtxlogSaver({ sqlite: join(dir, `${randomUUID()}.db`) })
  cleanups.push(() => saver.close())
  return saver
}

const collect = async (generator) => {
  const out = []
  for await (const item of generator) out.push(item)
  return out
}

describe("checkpoint-sqlite: SqliteSaver's tests on CtxlogSaver", () => {
  const checkpoint1 = {
    v: 1,
    id: uuid6(0),
    ts: "2024-04-19T17:19:07.952Z",
    channel_values: { someKey1: "someValue1" },
    channel_versions: { someKey2: 1 },
    versions_seen: { someKey3: { someKey4: 1 } }
  }
  const checkpoint2 = {
    v: 1,
    id: uuid6(1),
    ts: "2024-04-20T17:19:07.952Z",
    channel_values: { someKey1: "someValue2" },
    channel_versions: { someKey2: 2 },
    versions_seen: { someKey3: { someKey4: 2 } }
  }

  it("should save and retrieve checkpoints correctly", async () => {
    const sqliteSaver = await freshSaver()
    assert.equal(await sqliteSaver.getTuple({ configurable: { thread_id: "1" } }), undefined)
    const runnableConfig = await sqliteSaver.put({ configurable: { thread_id: "1" } }, checkpoint1, {
      source: "update",
      step: -1,
      parents: {}
    })
    assert.deepStrictEqual(runnableConfig, {
      configurable: { thread_id: "1", checkpoint_ns: "", checkpoint_id: checkpoint1.id }
    })
    await sqliteSaver.putWrites(
      { configurable: { checkpoint_id: checkpoint1.id, checkpoint_ns: "", thread_id: "1" } },
      [["bar", "baz"]],
      "foo"
    )
    const firstCheckpointTuple = await sqliteSaver.getTuple({ configurable: { thread_id: "1" } })
    assert.deepStrictEqual(firstCheckpointTuple?.config, {
      configurable: { thread_id: "1", checkpoint_ns: "", checkpoint_id: checkpoint1.id }
    })
    assert.deepStrictEqual(firstCheckpointTuple?.checkpoint, checkpoint1)
    assert.equal(firstCheckpointTuple?.parentConfig, undefined)
    assert.deepStrictEqual(firstCheckpointTuple?.pendingWrites, [["foo", "bar", "baz"]])

    await sqliteSaver.put(
      { configurable: { thread_id: "1", checkpoint_id: "2024-04-18T17:19:07.952Z" } },
      checkpoint2,
      {
        source: "update",
        step: -1,
        parents: { "": checkpoint1.id }
      }
    )
    const secondCheckpointTuple = await sqliteSaver.getTuple({ configurable: { thread_id: "1" } })
    assert.deepStrictEqual(secondCheckpointTuple?.parentConfig, {
      configurable: { thread_id: "1", checkpoint_ns: "", checkpoint_id: "2024-04-18T17:19:07.952Z" }
    })
    const checkpointTuples = await collect(
      sqliteSaver.list(
        { configurable: { thread_id: "1" } },
        { filter: { source: "update", step: -1, parents: { "": checkpoint1.id } } }
      )
    )
    assert.equal(checkpointTuples.length, 1)
    assert.equal(checkpointTuples[0].checkpoint.ts, "2024-04-20T17:19:07.952Z")
  })

  it("should preserve INTERRUPT/RESUME writes at fixed negative indices and not clobber prior regular writes", async () => {
    const sqliteSaver = await freshSaver()
    const checkpoint = { ...emptyCheckpoint(), id: uuid6(1), ts: "2024-04-19T17:19:07.952Z" }
    const savedConfig = await sqliteSaver.put({ configurable: { thread_id: "t1" } }, checkpoint, {
      source: "input",
      step: -1,
      parents: {}
    })
    const config = {
      configurable: {
        thread_id: "t1",
        checkpoint_ns: savedConfig.configurable.checkpoint_ns,
        checkpoint_id: checkpoint.id
      }
    }
    await sqliteSaver.putWrites(
      config,
      [
        ["foo", "val_foo"],
        ["bar", "val_bar"]
      ],
      "task_A"
    )
    await sqliteSaver.putWrites(config, [[INTERRUPT, "paused"]], "task_A")
    await sqliteSaver.putWrites(config, [[RESUME, "carry_on"]], "task_A")
    await sqliteSaver.putWrites(config, [["baz", "val_baz"]], "task_B")
    const tuple = await sqliteSaver.getTuple(config)
    const writes = tuple?.pendingWrites?.map(([taskId, channel]) => `${taskId}:${channel}`)
    assert.deepStrictEqual(
      new Set(writes),
      new Set(["task_A:foo", "task_A:bar", "task_A:__interrupt__", "task_A:__resume__", "task_B:baz"])
    )
  })

  it("should filter on arbitrary metadata keys, not just CheckpointMetadata keys", async () => {
    const sqliteSaver = await freshSaver()
    const put = (id, tenant, env) =>
      sqliteSaver.put(
        { configurable: { thread_id: id } },
        { ...emptyCheckpoint(), id: uuid6(Number.parseInt(id, 10)), ts: `2024-06-08T0${id}:00:00.000Z` },
        { source: "update", step: 0, parents: {}, tenant_id: tenant, env }
      )
    await put("1", "acme", "prod")
    await put("2", "acme", "dev")
    await put("3", "globex", "prod")
    const find = (filter) => collect(sqliteSaver.list({}, { filter }))
    const ids = (tuples) => tuples.map((t) => t.config.configurable?.thread_id).sort()
    assert.deepStrictEqual(ids(await find({ tenant_id: "acme" })), ["1", "2"])
    assert.equal((await find({ env: "prod" })).length, 2)
    assert.equal((await find({ tenant_id: "acme", env: "prod" })).length, 1)
    assert.equal((await find({ tenant_id: "missing" })).length, 0)
  })

  it("should delete thread", async () => {
    const saver = await freshSaver()
    await saver.put({ configurable: { thread_id: "1" } }, emptyCheckpoint(), {
      source: "update",
      step: -1,
      parents: {}
    })
    await saver.put({ configurable: { thread_id: "2" } }, emptyCheckpoint(), {
      source: "update",
      step: -1,
      parents: {}
    })
    await saver.deleteThread("1")
    assert.equal(await saver.getTuple({ configurable: { thread_id: "1" } }), undefined)
    assert.notEqual(await saver.getTuple({ configurable: { thread_id: "2" } }), undefined)
  })

  it("pending sends migration", async () => {
    const saver = await freshSaver()
    let config = { configurable: { thread_id: "thread-1", checkpoint_ns: "" } }
    const checkpoint0 = emptyCheckpoint()
    config = await saver.put(config, checkpoint0, { source: "loop", parents: {}, step: 0 })
    await saver.putWrites(
      config,
      [
        [TASKS, "send-1"],
        [TASKS, "send-2"]
      ],
      "task-1"
    )
    await saver.putWrites(config, [[TASKS, "send-3"]], "task-2")
    const tuple0 = await saver.getTuple(config)
    assert.deepStrictEqual(tuple0?.checkpoint.channel_values, {})
    assert.deepStrictEqual(tuple0?.checkpoint.channel_versions, {})
    const checkpoint1 = {
      v: 1,
      id: uuid6(1),
      ts: "2024-04-20T17:19:07.952Z",
      channel_values: {},
      channel_versions: checkpoint0.channel_versions,
      versions_seen: checkpoint0.versions_seen
    }
    config = await saver.put(config, checkpoint1, { source: "loop", parents: {}, step: 1 })
    const checkpoint1Tuple = await saver.getTuple(config)
    assert.deepStrictEqual(checkpoint1Tuple?.checkpoint.channel_values, { [TASKS]: ["send-1", "send-2", "send-3"] })
    assert.notEqual(checkpoint1Tuple?.checkpoint.channel_versions[TASKS], undefined)
    const checkpointTuples = await collect(saver.list({ configurable: { thread_id: "thread-1" } }))
    assert.equal(checkpointTuples.length, 2)
    assert.deepStrictEqual(checkpointTuples[0].checkpoint.channel_values, { [TASKS]: ["send-1", "send-2", "send-3"] })
    assert.notEqual(checkpointTuples[0].checkpoint.channel_versions[TASKS], undefined)
  })
})

describe("checkpoint: MemorySaver's tests on CtxlogSaver", () => {
  const checkpoint1 = {
    v: 4,
    id: uuid6(0),
    ts: "2024-04-19T17:19:07.952Z",
    channel_values: { someKey1: "someValue1" },
    channel_versions: { someKey2: 1 },
    versions_seen: { someKey3: { someKey4: 1 } }
  }
  const checkpoint2 = {
    v: 4,
    id: uuid6(1),
    ts: "2024-04-20T17:19:07.952Z",
    channel_values: { someKey1: "someValue2" },
    channel_versions: { someKey2: 2 },
    versions_seen: { someKey3: { someKey4: 2 } }
  }

  it("should save and retrieve checkpoints correctly", async () => {
    const memorySaver = await freshSaver()
    const runnableConfig = await memorySaver.put({ configurable: { thread_id: "1", checkpoint_ns: "" } }, checkpoint1, {
      source: "update",
      step: -1,
      parents: {}
    })
    assert.deepStrictEqual(runnableConfig, {
      configurable: { thread_id: "1", checkpoint_ns: "", checkpoint_id: checkpoint1.id }
    })
    const checkpointTuple = await memorySaver.getTuple({ configurable: { thread_id: "1", checkpoint_ns: "" } })
    assert.deepStrictEqual(checkpointTuple?.config, {
      configurable: { thread_id: "1", checkpoint_ns: "", checkpoint_id: checkpoint1.id }
    })
    assert.deepStrictEqual(checkpointTuple?.checkpoint, checkpoint1)
    await memorySaver.put({ configurable: { thread_id: "1", checkpoint_ns: "" } }, checkpoint2, {
      source: "update",
      step: -1,
      parents: {}
    })
    const checkpointTuples = await collect(memorySaver.list({ configurable: { thread_id: "1", checkpoint_ns: "" } }))
    assert.equal(checkpointTuples.length, 2)
    assert.equal(checkpointTuples[0].checkpoint.ts, "2024-04-20T17:19:07.952Z")
    assert.equal(checkpointTuples[1].checkpoint.ts, "2024-04-19T17:19:07.952Z")
  })

  it("should migrate pending sends", async () => {
    const memorySaver = await freshSaver()
    let config = { configurable: { thread_id: "thread-1", checkpoint_ns: "" } }
    const checkpoint0 = {
      v: 1,
      id: uuid6(0),
      ts: "2024-04-19T17:19:07.952Z",
      channel_values: {},
      channel_versions: {},
      versions_seen: {}
    }
    config = await memorySaver.put(config, checkpoint0, { source: "loop", parents: {}, step: 0 })
    await memorySaver.putWrites(
      config,
      [
        [TASKS, "send-1"],
        [TASKS, "send-2"]
      ],
      "task-1"
    )
    await memorySaver.putWrites(config, [[TASKS, "send-3"]], "task-2")
    const tuple0 = await memorySaver.getTuple(config)
    assert.deepStrictEqual(tuple0?.checkpoint.channel_values, {})
    assert.deepStrictEqual(tuple0?.checkpoint.channel_versions, {})
    const checkpoint1 = {
      v: 1,
      id: uuid6(1),
      ts: "2024-04-20T17:19:07.952Z",
      channel_values: {},
      channel_versions: checkpoint0.channel_versions,
      versions_seen: checkpoint0.versions_seen
    }
    config = await memorySaver.put(config, checkpoint1, { source: "loop", parents: {}, step: 1 })
    const checkpoint1Tuple = await memorySaver.getTuple(config)
    assert.deepStrictEqual(checkpoint1Tuple?.checkpoint.channel_values, { [TASKS]: ["send-1", "send-2", "send-3"] })
    assert.notEqual(checkpoint1Tuple?.checkpoint.channel_versions[TASKS], undefined)
    const checkpointTuples = await collect(memorySaver.list({ configurable: { thread_id: "thread-1" } }))
    assert.equal(checkpointTuples.length, 2)
    assert.deepStrictEqual(checkpointTuples[0].checkpoint.channel_values, { [TASKS]: ["send-1", "send-2", "send-3"] })
    assert.notEqual(checkpointTuples[0].checkpoint.channel_versions[TASKS], undefined)
  })

  const forged = (markerKey) => ({
    lc: 2,
    type: "constructor",
    id: ["Uint8Array"],
    method: "from",
    args: [
      [1],
      {
        lc: 2,
        type: "constructor",
        id: ["Uint8Array"],
        method: "constructor",
        args: [`globalThis.${markerKey}.invoked = true`],
        kwargs: {}
      }
    ],
    kwargs: {}
  })

  it("keeps metadata constructor records inert on a later read", async () => {
    const memorySaver = await freshSaver()
    const markerKey = "__langgraph_checkpoint_metadata_marker__"
    const marker = { invoked: false }
    globalThis[markerKey] = marker
    const forgedRecord = forged(markerKey)
    const config = { configurable: { thread_id: "metadata-security" } }
    try {
      await memorySaver.put(config, checkpoint1, { source: "update", step: -1, parents: {}, forged: forgedRecord })
      const restored = await memorySaver.getTuple(config)
      assert.equal(marker.invoked, false)
      assert.deepStrictEqual(restored?.metadata?.forged, forgedRecord)
    } finally {
      delete globalThis[markerKey]
    }
  })

  it("keeps forged additional_kwargs constructor records inert on restore", async () => {
    const memorySaver = await freshSaver()
    const markerKey = "__langgraph_checkpoint_message_marker__"
    const marker = { invoked: false }
    globalThis[markerKey] = marker
    const forgedRecord = forged(markerKey)
    const config = { configurable: { thread_id: "message-security" } }
    try {
      const savedConfig = await memorySaver.put(config, checkpoint1, { source: "update", step: -1, parents: {} })
      await memorySaver.putWrites(
        savedConfig,
        [["messages", new HumanMessage({ content: "ordinary message", additional_kwargs: { forged: forgedRecord } })]],
        "message-security-task"
      )
      const restored = await memorySaver.getTuple(savedConfig)
      const message = restored?.pendingWrites?.[0]?.[2]
      assert.equal(marker.invoked, false)
      assert.deepStrictEqual(message.additional_kwargs.forged, forgedRecord)
    } finally {
      delete globalThis[markerKey]
    }
  })

  it("should delete thread", async () => {
    const memorySaver = await freshSaver()
    const thread1 = { configurable: { thread_id: "1", checkpoint_ns: "" } }
    const thread2 = { configurable: { thread_id: "2", checkpoint_ns: "" } }
    const meta = { source: "update", step: -1, parents: {} }
    await memorySaver.put(thread1, emptyCheckpoint(), meta)
    await memorySaver.put(thread2, emptyCheckpoint(), meta)
    assert.notEqual(await memorySaver.getTuple(thread1), undefined)
    await memorySaver.deleteThread("1")
    assert.equal(await memorySaver.getTuple(thread1), undefined)
    assert.notEqual(await memorySaver.getTuple(thread2), undefined)
  })
})
