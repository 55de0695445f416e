/**
 * Connections for blocking reads (`XREAD BLOCK` holds its connection until it answers).
 * Opening one costs a TCP handshake and a HELLO (~1.5 ms on loopback, more under load), so a
 * tail or a wait borrows an idle one and gives it back when it is done. An idle connection
 * does not keep the process alive (its socket is unreferenced) and is closed after `idleMs`.
 */
import type { Redis } from "ioredis";

/** Idle connections kept for the next blocking read. */
const MAX_IDLE = 8;

export interface BlockingConnections {
  /** An idle connection, or a new one. */
  acquire(): Redis;
  /** Gives `connection` back; one whose read was interrupted (`reusable: false`) is closed. */
  release(connection: Redis, reusable: boolean): void;
  /** Closes the idle connections (borrowed ones close when they are given back). */
  close(): void;
}

/** Reference or unreference the socket under an ioredis connection (absent before it connects). */
const setRef = (connection: Redis, ref: boolean) => {
  const socket = (connection as unknown as { stream?: { ref?(): void; unref?(): void } }).stream;
  if (ref) socket?.ref?.();
  else socket?.unref?.();
};

export function blockingConnections(redis: Redis, idleMs = 30_000): BlockingConnections {
  const idle = new Map<Redis, ReturnType<typeof setTimeout>>();
  let closed = false;
  const drop = (connection: Redis) => {
    clearTimeout(idle.get(connection));
    idle.delete(connection);
    connection.disconnect();
  };
  return {
    acquire() {
      for (const [connection, timer] of idle) {
        idle.delete(connection);
        clearTimeout(timer);
        if (connection.status !== "ready") {
          connection.disconnect();
          continue;
        }
        setRef(connection, true);
        return connection;
      }
      return redis.duplicate();
    },
    release(connection, reusable) {
      if (!reusable || closed || idle.size >= MAX_IDLE || connection.status !== "ready") {
        connection.disconnect();
        return;
      }
      setRef(connection, false);
      const timer = setTimeout(() => drop(connection), idleMs);
      timer.unref?.();
      idle.set(connection, timer);
    },
    close() {
      closed = true;
      for (const connection of [...idle.keys()]) drop(connection);
    },
  };
}
