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
    proxy: {
      '/api': {
        target: service,
        changeOrigin: true,
        // The dev server's pages stand in for the service's own: the service takes the session cookie on
        // unsafe and token-burning requests only from its own origin.
        configure: (proxy) => {
          proxy.on('proxyReq', (request) => {
            if (request.getHeader('origin')) request.setHeader('origin', new URL(service).origin);
          });
        },
      },
    },
  },
});
