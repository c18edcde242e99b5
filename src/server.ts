/** The server's public entry: `serve`, the tests and the benchmarks start a server here (assembled in app/). */
export { type Role, type RunningServer, type ServerOptions, startServer } from './app/server.js';
