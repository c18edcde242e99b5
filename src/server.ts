/** The server's public entry: `serve`, the tests and the benchmarks start a server here (assembled in app/). */
export { type RunningServer, type Role, type ServerOptions, startServer } from './app/server.js';
