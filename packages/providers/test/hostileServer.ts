/**
 * Hostile HTTP servers on 127.0.0.1 for the provider clients' limits: each writes a body piece by
 * piece, respecting back-pressure (so the server, not the test, never buffers a large body), and
 * counts the bytes it handed to the socket until the client hung up. A client that reads a body whole
 * lets the server write all of it; a client that enforces its limits hangs up after a small prefix.
 */
import type { ServerResponse } from "node:http"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { serve } from "./server.js"

/** What a hostile server saw. */
export interface Hostile {
  readonly url: string
  /** Bytes of the body handed to the socket so far. */
  readonly written: () => number
  /** Completes when the client closed the connection (or the server finished its body). */
  readonly ended: Effect.Effect<"client hung up" | "body finished">
}

/** A body writer: `write` resolves once the piece may be followed by another (false once the client left). */
export type Script = (write: (piece: string | Buffer) => Promise<boolean>, response: ServerResponse) => Promise<void>

/** 200 MB: more than any client limit under test, far more than a test may hold in memory. */
export const hugeBytes = 200 * 1024 * 1024

/** Serve `script` for every request, with the given status and content type. */
export const hostile = (
  status: number,
  contentType: string,
  script: Script
): Effect.Effect<Hostile, never, Scope.Scope> =>
  Effect.gen(function* () {
    let written = 0
    const ended = yield* Deferred.make<"client hung up" | "body finished">()
    const server = yield* serve((_request, response) => {
      let gone = false
      response.on("close", () => {
        if (!response.writableFinished) {
          gone = true
          Deferred.unsafeDone(ended, Effect.succeed("client hung up"))
        }
      })
      response.writeHead(status, { "content-type": contentType })
      const write = (piece: string | Buffer): Promise<boolean> =>
        new Promise((resolve) => {
          if (gone) return resolve(false)
          written += Buffer.byteLength(piece)
          if (response.write(piece)) return resolve(!gone)
          const settle = () => {
            response.off("drain", settle)
            response.off("close", settle)
            resolve(!gone)
          }
          response.on("drain", settle)
          response.on("close", settle)
        })
      void script(write, response).then(() => {
        if (!gone) {
          response.end()
          Deferred.unsafeDone(ended, Effect.succeed("body finished"))
        }
      })
    })
    return { url: server.url, written: () => written, ended: Deferred.await(ended) }
  })

/** Write `total` bytes as repeats of `piece` (64 KiB at a time), stopping when the client leaves. */
export const flood = async (
  write: (piece: string | Buffer) => Promise<boolean>,
  piece: string,
  total: number
): Promise<void> => {
  const block = Buffer.from(piece.repeat(Math.max(1, Math.floor(65_536 / Buffer.byteLength(piece)))))
  for (let sent = 0; sent < total; sent += block.length) {
    if (!(await write(block))) return
  }
}

/** Wait `ms` without blocking the event loop. */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
