/** The Terminal's build: served by the service at /terminal/; `npm run dev:web` proxies /api to it. */
import { defineConfig } from 'vite';

const service = process.env.TMD_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/terminal/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline script anywhere: the CSP forbids it.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: {
    port: 5173,
    proxy: { '/api': { target: service, changeOrigin: true } },
  },
});
