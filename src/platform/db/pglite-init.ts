// `node pglite-init.js <directory> <shared buffers MB>`: creates an embedded database directory (PGlite's initdb)
// and exits. The server runs it as a child process on its first start: initdb loads a second WebAssembly module
// and a second database instance, whose memory (about 115 MB, and a peak of 840 MB) a process keeps after they are
// closed; a child gives it all back when it exits (bench/idle-memory).
import { openPglite } from './pglite.js';

const [directory, sharedBuffers] = process.argv.slice(2);
if (!directory || !sharedBuffers) throw new Error('usage: pglite-init <directory> <shared buffers MB>');
const pglite = await openPglite(directory, Number(sharedBuffers));
await pglite.close();
