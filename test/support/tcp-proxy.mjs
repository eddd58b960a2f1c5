// A loopback-only TCP proxy for fault tests: sits between a client and a server and misbehaves on demand in the
// server→client direction (the answer). It can cut a connection after N bytes of answer, and split the answer into
// tiny pieces delivered with a delay (so SSE events and multi-byte UTF-8 characters arrive split across reads).
// The mode can change at any time; it applies to bytes forwarded after the change. Plain JavaScript so any test or
// script can import it.
import { createServer, connect } from 'node:net';

/**
 * @typedef {object} ProxyMode
 * @property {number} [cutAfterBytes] close the client connection after forwarding this many answer bytes on it
 * @property {number} [chunkBytes] forward the answer in pieces of at most this many bytes
 * @property {number} [delayMs] wait this long before each forwarded piece
 */

/**
 * Starts the proxy on 127.0.0.1 (a free port unless `port` is given) in front of `targetHost:targetPort`.
 * @param {{ targetPort: number, targetHost?: string, port?: number, mode?: ProxyMode }} options
 */
export async function startTcpProxy(options) {
  const targetHost = options.targetHost ?? '127.0.0.1';
  /** @type {ProxyMode} */
  let mode = { ...(options.mode ?? {}) };
  const sockets = new Set();
  const stats = { connections: 0, active: 0, maxActive: 0, cut: 0, bytesToClient: 0, bytesToServer: 0 };

  const server = createServer((client) => {
    stats.connections += 1;
    stats.active += 1;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    const upstream = connect({ host: targetHost, port: options.targetPort });
    sockets.add(client);
    sockets.add(upstream);
    let forwarded = 0;
    let closed = false;
    // Pieces are written strictly in order; `chain` serializes the delays.
    let chain = Promise.resolve();

    const closeBoth = () => {
      if (closed) return;
      closed = true;
      stats.active -= 1;
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };

    client.on('data', (d) => {
      stats.bytesToServer += d.length;
      upstream.write(d);
    });
    upstream.on('data', (data) => {
      const m = mode;
      const size = m.chunkBytes && m.chunkBytes > 0 ? m.chunkBytes : data.length;
      const pieces = [];
      for (let i = 0; i < data.length; i += size) pieces.push(data.subarray(i, i + size));
      if (m.delayMs) upstream.pause(); // backpressure: do not read more than we can deliver
      chain = chain.then(async () => {
        for (const piece of pieces) {
          if (closed) return;
          if (m.delayMs) await new Promise((r) => setTimeout(r, m.delayMs));
          if (closed) return;
          let out = piece;
          if (m.cutAfterBytes !== undefined && forwarded + out.length >= m.cutAfterBytes) {
            out = out.subarray(0, Math.max(0, m.cutAfterBytes - forwarded));
            forwarded += out.length;
            stats.bytesToClient += out.length;
            stats.cut += 1;
            closed = true;
            stats.active -= 1;
            upstream.destroy();
            sockets.delete(upstream);
            // The last bytes leave before the FIN, so the client reads them and then sees the cut.
            client.end(out.length ? out : undefined);
            setTimeout(() => { client.destroy(); sockets.delete(client); }, 200).unref();
            return;
          }
          forwarded += out.length;
          stats.bytesToClient += out.length;
          client.write(out);
        }
      }).finally(() => { if (!closed && upstream.isPaused()) upstream.resume(); });
    });
    const endAfterPending = () => { chain = chain.then(() => closeBoth()); };
    upstream.on('end', endAfterPending);
    client.on('end', () => upstream.end());
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', closeBoth);
    upstream.on('close', endAfterPending);
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    stats,
    /** Replaces the misbehaviour (an empty object: a transparent proxy). */
    setMode(next) { mode = { ...next }; },
    /** Closes the listener and every connection through it. */
    async close() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
