// Ported from vercel/ai `packages/ai/src/middleware/wrap-language-model.test.ts` (Apache-2.0, © Vercel,
// Inc.): for ai 6 at commit a727da484534bbdbf88d53497ed383fee7f7ffa1 (the file as of release-v6.0,
// b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf), for ai 7 at 258c0933088ef47b70b2ee805690ded07f1267db (main,
// ed857f50f112e23930b0c2dd8d532cc8bebbc911); the two differ only in V3/V4 names. The installed
// `wrap-language-model.ts` (ai 6.0.326, ai 7.0.173) is byte for byte the one at those commits.
//
// Each of the 18 cases keeps its name and what it asserts of `wrapLanguageModel`, with `ctxlogMiddleware`
// in the chain where the original had a `vi.fn()` middleware, so it checks the contract a middleware must
// keep: the model's id, provider and supported URLs pass through it; the caller's other call options
// (and earlier middlewares' changes) reach the model with the prompt ctxlog rendered; the result of
// `doGenerate` / `doStream` comes back unchanged, so other middlewares compose around it. Adaptations
// (packages/integrations/README.md lists them): the mock model returns a real result (the original's
// `'mock result'` strings and empty answer lists are not results, and ctxlog records every answer), and
// the chained-wrapper cases mark the result objects instead of wrapping strings.
//
// Plain JavaScript with its dependencies injected, so the same cases run in the workspace
// (test/wrapLanguageModel.test.ts, ai 6 and ai 7) and in a project that installed the packed tarballs
// (integration/test/packInstall.aiSdk.test.ts).

/**
 * @param {object} deps
 * @param {string} deps.label
 * @param {Function} deps.wrapLanguageModel
 * @param {new (options?: object) => any} deps.MockModel
 * @param {"v3" | "v4"} deps.specificationVersion
 * @param {(options: object) => any} deps.ctxlogMiddleware
 * @param {{ describe: Function, it: Function, expect: any, vi: any, afterAll: Function }} deps.t
 */
export const wrapLanguageModelSuite = ({
  label,
  wrapLanguageModel,
  MockModel,
  specificationVersion,
  ctxlogMiddleware,
  t
}) => {
  const { describe, it, expect, vi, afterAll } = t
  const opened = []
  const ctxlog = () => {
    const middleware = ctxlogMiddleware({ memory: true, stream: `ported-${opened.length}` })
    opened.push(middleware)
    return middleware
  }
  afterAll(async () => {
    for (const middleware of opened) await middleware.close()
  })

  const usage = {
    inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 2, text: 2, reasoning: 0 }
  }
  const result = () => ({
    content: [{ type: "text", text: "Hi" }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: []
  })
  const streamResult = () => ({
    stream: new ReadableStream({
      start(controller) {
        for (const part of [
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Hi" },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }
        ])
          controller.enqueue(part)
        controller.close()
      }
    })
  })
  const readAll = async (stream) => {
    const parts = []
    const reader = stream.getReader()
    for (;;) {
      const next = await reader.read()
      if (next.done) return parts
      parts.push(next.value)
    }
  }
  const params = () => ({ prompt: [{ role: "user", content: [{ type: "text", text: "Hello" }] }] })

  describe(`wrapLanguageModel with ctxlogMiddleware (${label})`, () => {
    describe("model property", () => {
      it("should pass through by default", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ modelId: "test-model" }),
          middleware: ctxlog()
        })
        expect(wrappedModel.modelId).toBe("test-model")
      })

      it("should use middleware overrideModelId if provided", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ modelId: "test-model" }),
          middleware: [ctxlog(), { specificationVersion, overrideModelId: () => "override-model" }]
        })
        expect(wrappedModel.modelId).toBe("override-model")
      })

      it("should use modelId parameter if provided", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ modelId: "test-model" }),
          middleware: ctxlog(),
          modelId: "override-model"
        })
        expect(wrappedModel.modelId).toBe("override-model")
      })
    })

    describe("provider property", () => {
      it("should pass through by default", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ provider: "test-provider" }),
          middleware: ctxlog()
        })
        expect(wrappedModel.provider).toBe("test-provider")
      })

      it("should use middleware overrideProvider if provided", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ provider: "test-provider" }),
          middleware: [ctxlog(), { specificationVersion, overrideProvider: () => "override-provider" }]
        })
        expect(wrappedModel.provider).toBe("override-provider")
      })

      it("should use providerId parameter if provided", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ provider: "test-provider" }),
          middleware: ctxlog(),
          providerId: "override-provider"
        })
        expect(wrappedModel.provider).toBe("override-provider")
      })
    })

    describe("supportedUrls property", () => {
      it("should pass through by default", async () => {
        const supportedUrls = { "original/*": [/^https:\/\/.*$/] }
        const wrappedModel = wrapLanguageModel({ model: new MockModel({ supportedUrls }), middleware: ctxlog() })
        expect(await wrappedModel.supportedUrls).toStrictEqual(supportedUrls)
      })

      it("should use middleware overrideSupportedUrls if provided", () => {
        const wrappedModel = wrapLanguageModel({
          model: new MockModel({ supportedUrls: { "original/*": [/^https:\/\/.*$/] } }),
          middleware: [
            ctxlog(),
            { specificationVersion, overrideSupportedUrls: () => ({ "override/*": [/^https:\/\/.*$/] }) }
          ]
        })
        expect(wrappedModel.supportedUrls).toStrictEqual({ "override/*": [/^https:\/\/.*$/] })
      })
    })

    it("should call transformParams middleware for doGenerate", async () => {
      const mockModel = new MockModel({ doGenerate: async () => result() })
      const middleware = ctxlog()
      const transformParams = vi.spyOn(middleware, "transformParams")
      const wrappedModel = wrapLanguageModel({ model: mockModel, middleware })
      const call = { ...params(), maxOutputTokens: 100, transformed: true }
      await wrappedModel.doGenerate(call)
      expect(transformParams).toHaveBeenCalledWith({ params: call, type: "generate", model: expect.any(Object) })
      // The render of a first user message is that message: the options reach the model as they were.
      expect(mockModel.doGenerateCalls[0]).toStrictEqual(call)
    })

    it("should call wrapGenerate middleware", async () => {
      const answer = result()
      const mockModel = new MockModel({ doGenerate: async () => answer })
      const middleware = ctxlog()
      const wrapGenerate = vi.spyOn(middleware, "wrapGenerate")
      const wrappedModel = wrapLanguageModel({ model: mockModel, middleware })
      const call = params()
      const returned = await wrappedModel.doGenerate(call)
      expect(wrapGenerate).toHaveBeenCalledWith({
        doGenerate: expect.any(Function),
        doStream: expect.any(Function),
        params: call,
        model: mockModel
      })
      expect(returned).toBe(answer)
    })

    it("should call transformParams middleware for doStream", async () => {
      const mockModel = new MockModel({ doStream: async () => streamResult() })
      const middleware = ctxlog()
      const transformParams = vi.spyOn(middleware, "transformParams")
      const wrappedModel = wrapLanguageModel({ model: mockModel, middleware })
      const call = { ...params(), transformed: true }
      const { stream } = await wrappedModel.doStream(call)
      await readAll(stream)
      expect(transformParams).toHaveBeenCalledWith({ params: call, type: "stream", model: expect.any(Object) })
      expect(mockModel.doStreamCalls[0]).toStrictEqual(call)
    })

    it("should call wrapStream middleware", async () => {
      const mockModel = new MockModel({ doStream: async () => streamResult() })
      const middleware = ctxlog()
      const wrapStream = vi.spyOn(middleware, "wrapStream")
      const wrappedModel = wrapLanguageModel({ model: mockModel, middleware })
      const call = params()
      const { stream } = await wrappedModel.doStream(call)
      expect(wrapStream).toHaveBeenCalledWith({
        doGenerate: expect.any(Function),
        doStream: expect.any(Function),
        params: call,
        model: mockModel
      })
      // Every part passes through unchanged.
      expect(await readAll(stream)).toStrictEqual(await readAll(streamResult().stream))
    })

    it('should support models that use "this" context in supportedUrls', async () => {
      let supportedUrlsCalled = false
      class MockLanguageModelWithImageSupport {
        specificationVersion = specificationVersion
        provider = "test-provider"
        modelId = "test-model"
        doGenerate = vi.fn()
        doStream = vi.fn()
        value = { "image/*": [/^https:\/\/.*$/] }
        get supportedUrls() {
          supportedUrlsCalled = true
          return this.value
        }
      }
      const model = new MockLanguageModelWithImageSupport()
      const wrappedModel = wrapLanguageModel({ model, middleware: ctxlog() })
      expect(await wrappedModel.supportedUrls).toStrictEqual(model.value)
      expect(supportedUrlsCalled).toBe(true)
    })

    describe("multiple middlewares", () => {
      for (const type of ["generate", "stream"]) {
        it(`should call multiple transformParams middlewares in sequence for do${type === "generate" ? "Generate" : "Stream"}`, async () => {
          const mockModel = new MockModel(
            type === "generate" ? { doGenerate: async () => result() } : { doStream: async () => streamResult() }
          )
          const transformParams1 = vi
            .fn()
            .mockImplementation(({ params }) => ({ ...params, transformationStep1: true }))
          const transformParams2 = vi
            .fn()
            .mockImplementation(({ params }) => ({ ...params, transformationStep2: true }))
          const wrappedModel = wrapLanguageModel({
            model: mockModel,
            middleware: [
              { specificationVersion, transformParams: transformParams1 },
              ctxlog(),
              { specificationVersion, transformParams: transformParams2 }
            ]
          })
          const call = params()
          if (type === "generate") await wrappedModel.doGenerate(call)
          else await readAll((await wrappedModel.doStream(call)).stream)
          expect(transformParams1).toHaveBeenCalledWith({ params: call, type, model: expect.any(Object) })
          // ctxlog keeps what the earlier middleware set, with its render as the prompt.
          expect(transformParams2).toHaveBeenCalledWith({
            params: { ...call, transformationStep1: true },
            type,
            model: expect.any(Object)
          })
          const calls = type === "generate" ? mockModel.doGenerateCalls : mockModel.doStreamCalls
          expect(calls[0]).toStrictEqual(
            expect.objectContaining({ transformationStep1: true, transformationStep2: true })
          )
        })
      }

      it("should chain multiple wrapGenerate middlewares in the correct order", async () => {
        const mockModel = new MockModel({ doGenerate: async () => ({ ...result(), order: ["model"] }) })
        const mark = (name) =>
          vi.fn().mockImplementation(async ({ doGenerate }) => {
            const inner = await doGenerate()
            return { ...inner, order: [...inner.order, name] }
          })
        const wrapGenerate1 = mark("wrapGenerate1")
        const wrapGenerate2 = mark("wrapGenerate2")
        const wrappedModel = wrapLanguageModel({
          model: mockModel,
          middleware: [
            { specificationVersion, wrapGenerate: wrapGenerate1 },
            ctxlog(),
            { specificationVersion, wrapGenerate: wrapGenerate2 }
          ]
        })
        const returned = await wrappedModel.doGenerate(params())
        // The middlewares wrap in order, wrapGenerate2 innermost; ctxlog hands on what it got.
        expect(returned.order).toStrictEqual(["model", "wrapGenerate2", "wrapGenerate1"])
        expect(wrapGenerate1).toHaveBeenCalled()
        expect(wrapGenerate2).toHaveBeenCalled()
      })

      it("should chain multiple wrapStream middlewares in the correct order", async () => {
        const mockModel = new MockModel({ doStream: async () => ({ ...streamResult(), order: ["model"] }) })
        const mark = (name) =>
          vi.fn().mockImplementation(async ({ doStream }) => {
            const inner = await doStream()
            return { ...inner, order: [...inner.order, name] }
          })
        const wrapStream1 = mark("wrapStream1")
        const wrapStream2 = mark("wrapStream2")
        const wrappedModel = wrapLanguageModel({
          model: mockModel,
          middleware: [
            { specificationVersion, wrapStream: wrapStream1 },
            ctxlog(),
            { specificationVersion, wrapStream: wrapStream2 }
          ]
        })
        const returned = await wrappedModel.doStream(params())
        await readAll(returned.stream)
        expect(returned.order).toStrictEqual(["model", "wrapStream2", "wrapStream1"])
        expect(wrapStream1).toHaveBeenCalled()
        expect(wrapStream2).toHaveBeenCalled()
      })

      it("should not mutate the middleware array argument", async () => {
        const middleware1 = ctxlog()
        const middleware2 = { specificationVersion, wrapStream: vi.fn() }
        const middlewares = [middleware1, middleware2]
        wrapLanguageModel({ model: new MockModel(), middleware: middlewares })
        expect(middlewares.length).toBe(2)
        expect(middlewares[0]).toBe(middleware1)
        expect(middlewares[1]).toBe(middleware2)
      })
    })
  })
}
