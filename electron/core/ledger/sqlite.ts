/**
 * A promise-shaped SQLite connection for the ledger's index (see docs/decisions/0001-ledger-index.md).
 *
 * Backed by the `sqlite3` package: its statements run on libuv's thread pool, so no query and no
 * commit ever blocks the event loop of Electron's main process, and it is a Node-API module, so
 * the same build loads in Node (tests) and in Electron (no rebuild for Electron's ABI). The
 * connection runs in serialized mode: statements execute in the order they were issued, which
 * is what lets a read issued after a write see it.
 */
import { createRequire } from 'node:module';
import type { Database as SqliteDatabase } from 'sqlite3';

/** The few things the index does with SQL. Parameters are positional (`?`). */
export interface SqlConnection {
  exec(sql: string): Promise<void>;
  run(sql: string, params?: unknown[]): Promise<void>;
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  get<T>(sql: string, params?: unknown[]): Promise<T | undefined>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Opens (creating if needed) the database at `path` (`:memory:` for one that lives in memory). */
export async function openSqlite(path: string): Promise<SqlConnection> {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  const db = await new Promise<SqliteDatabase>((resolve, reject) => {
    const d: SqliteDatabase = new sqlite3.Database(path, (err) => (err ? reject(err) : resolve(d)));
  });
  db.serialize();
  const call = <T>(method: 'run' | 'all' | 'get', sql: string, params: unknown[] = []): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      (db[method] as (sql: string, params: unknown[], cb: (err: Error | null, value: T) => void) => void).call(db, sql, params, (err, value) => (err ? reject(err) : resolve(value)));
    });
  return {
    exec: (sql) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve()))),
    run: async (sql, params) => {
      await call('run', sql, params);
    },
    all: (sql, params) => call('all', sql, params),
    get: (sql, params) => call('get', sql, params),
    close: () => new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve()))),
  };
}
