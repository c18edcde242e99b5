import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FUNCTIONS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'functions.sql');

/** The lifecycle's SQL functions (functions.sql), which the migration runner applies after the migrations. */
export function loadLifecycleFunctions(): string {
  return fs.readFileSync(FUNCTIONS_FILE, 'utf8');
}
