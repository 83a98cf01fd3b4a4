// lab settings shared by every test run: tests run on the compiled JavaScript in dist/.
module.exports = {
  // Libraries the service uses leave these globals behind on purpose; anything else is a leak.
  globals: 'fetch,Response,Headers,Request,FormData,Blob,File,structuredClone,crypto,AbortController,AbortSignal,navigator,__core-js_shared__,WebSocket,CustomEvent,EventTarget,Event,BroadcastChannel,DOMException,ReadableStream,WritableStream,TransformStream,TextEncoder,TextDecoder,performance,queueMicrotask,setImmediate,clearImmediate,URL,URLSearchParams,MessageChannel,MessagePort,MessageEvent,Buffer,global,File,__extends,__assign,__rest,__decorate,__param,__metadata,__awaiter,__generator,__exportStar,__values,__read,__spread,__spreadArrays,__spreadArray,__await,__asyncGenerator,__asyncDelegator,__asyncValues,__makeTemplateObject,__importStar,__importDefault,__classPrivateFieldGet,__classPrivateFieldSet,__createBinding,__esDecorate,__runInitializers,__propKey,__setFunctionName,__addDisposableResource,__disposeResources,__classPrivateFieldIn,__rewriteRelativeImportExtension,Symbol(signal-exit emitter),Symbol(openai.node.providerDefinitions.v1)',
  timeout: 120000,
};
