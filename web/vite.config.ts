// The web dashboard: `vite build web` writes it to dist/web, which Hangar serves at `/`
// (src/platform/http/dashboard.ts). `vite web` serves it with live reload, sending API calls to a Hangar on :8080.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const target = process.env.HANGAR_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1000,
  },
  server: { proxy: { '/api': target } },
});
