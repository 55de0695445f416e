/**
 * A real HTTP server on 127.0.0.1 for tests where sockets matter (drops, slow
 * streams, resume). The handler sees the call number, so a test can script
 * "stream, cut, then resume" the way a real server would behave.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export type LoopbackHandler = (
  request: RecordedRequest,
  response: ServerResponse,
  call: number,
) => void | Promise<void>;

export interface Loopback {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startLoopback(handler: LoopbackHandler): Promise<Loopback> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    requests.push(recorded);
    try {
      await handler(recorded, res, requests.length - 1);
    } catch (error) {
      res.destroy(error as Error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `bytes` then destroys the socket mid-stream (a reset, as a proxy would). */
export function writeThenCut(response: ServerResponse, head: Record<string, string>, bytes: Buffer): void {
  response.writeHead(200, head);
  response.flushHeaders();
  response.write(bytes, () => setImmediate(() => response.socket?.destroy()));
}
