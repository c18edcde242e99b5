// Copies what tsc does not: the SQL migrations, next to the compiled migration runner, and the run lifecycle's SQL
// functions, next to the module that loads them.
import fs from 'node:fs';

fs.cpSync('src/platform/db/migrations', 'dist/platform/db/migrations', { recursive: true });
fs.cpSync('src/runs/lifecycle/functions.sql', 'dist/runs/lifecycle/functions.sql');
fs.chmodSync('dist/main.js', 0o755);
