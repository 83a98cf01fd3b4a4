// The HTTP floor: what any service on this machine pays before doing any work. A bare hapi
// route with the same multipart settings as the service's routes, called with the same client
// (undici fetch), the same files and fields, answering a body as large as the service's result
// and of the same media type (hapi gzips the compressible ones, JSON for example, for both).
// Raw tool time plus this floor is the best an HTTP service could reach; the service's time
// beyond it is what the service itself adds (checks, job directory, pool, result handling).
import Hapi from '@hapi/hapi';
import { readMultipart } from '../../server/plugins/multipart.js';
import { withBody, streamedPayload } from '../../server/plugins/body.js';
import { form } from './service.js';

export interface HttpFloor {
  /** One bare multipart round trip (upload, parse, a reply like the service's read to the end), in ms. */
  call(
    files: Array<{ bytes: Uint8Array; name: string; type: string }>, fields: Record<string, string | number> | undefined,
    reply: { bytes: number; mediaType: string },
  ): Promise<number>;
  stop(): Promise<void>;
}

export async function startHttpFloor(): Promise<HttpFloor> {
  const server = Hapi.server({ port: 0, host: '127.0.0.1' });
  server.route({
    method: 'POST',
    path: '/floor',
    options: {
      payload: streamedPayload(['multipart/form-data'], 512 * 1024 * 1024),
    },
    handler: async (request, h) => {
      // The uploads' bytes and the fields, read as the service's routes read them.
      await withBody(request, 120_000, false, async (body) => readMultipart(body, request.headers['content-type'], 64));
      return h.response(Buffer.alloc(Number(request.headers['x-reply-bytes'] ?? 0))).type(String(request.headers['x-reply-type'] || 'application/octet-stream'));
    },
  });
  await server.start();
  const url = `http://127.0.0.1:${server.info.port}/floor`;
  return {
    async call(files, fields, reply) {
      // The request is sent as the x402 client sends a paid retry: first once untimed (the quote's
      // turn, answered with a tiny body), then a clone of it, whose body the first send has already
      // encoded and buffered. Only the clone is timed, as only the paid request is on the service side.
      const first = new Request(url, { method: 'POST', body: form(files, fields), headers: { 'x-reply-bytes': '0' } });
      const again = first.clone();
      again.headers.set('x-reply-bytes', String(reply.bytes));
      again.headers.set('x-reply-type', reply.mediaType);
      await (await fetch(first)).arrayBuffer();
      const started = performance.now();
      const res = await fetch(again);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`the floor route answered ${res.status}`);
      return performance.now() - started;
    },
    stop: () => server.stop(),
  };
}
