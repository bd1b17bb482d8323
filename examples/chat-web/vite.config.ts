import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The page lives in src/client; `vite build` writes it to dist/client, which the server serves.
export default defineConfig({
  root: fileURLToPath(new URL('./src/client', import.meta.url)),
  cacheDir: fileURLToPath(new URL('./node_modules/.vite', import.meta.url)),
  build: { outDir: fileURLToPath(new URL('./dist/client', import.meta.url)), emptyOutDir: true },
  // Bundled before the page first loads, so the dev server never reloads it mid-session.
  optimizeDeps: { include: ['@ag-ui/client'] },
});
