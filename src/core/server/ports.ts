// A host port is free when we can listen on it ourselves on the bind address docker will publish it on.
import { createServer } from 'node:net';
import { ServerError } from './errors';

export async function checkPortFree(port: number, address: string): Promise<void> {
  const err = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    srv.listen({ port, host: address, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
  if (!err) return;
  if (err.code === 'EADDRINUSE') {
    throw new ServerError({
      code: 'port-allocated',
      message: `Port ${port} is already in use on ${address}.`,
      fix: 'Stop the program that uses the port, or choose other HTTP/gRPC/metrics ports in the settings.',
      detail: err.message,
    });
  }
  if (err.code === 'EADDRNOTAVAIL') {
    throw new ServerError({ code: 'settings-invalid', message: `The bind address ${address} does not belong to this machine.`, fix: 'Use 127.0.0.1 (the default) as the bind address.', detail: err.message });
  }
  if (err.code === 'EACCES') {
    throw new ServerError({ code: 'settings-invalid', message: `Port ${port} needs administrator rights.`, fix: 'Choose a port above 1023.', detail: err.message });
  }
  throw new ServerError({ code: 'unknown', message: `Cannot check port ${port}: ${err.message}`, fix: 'Choose other ports in the settings.', detail: err.message });
}
