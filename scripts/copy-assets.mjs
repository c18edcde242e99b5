// Copies what tsc does not: the SQL migrations, next to the compiled migration runner.
import fs from 'node:fs';

fs.cpSync('src/platform/db/migrations', 'dist/platform/db/migrations', { recursive: true });
fs.chmodSync('dist/main.js', 0o755);
