import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web console (`npm run build`): bundled into dist/console/, next to the server's build, which serves it at `/`
 * (src/http/console/). Nothing is fetched at run time; every file is the page's own origin, as its CSP requires.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // the polyfill would be inline script, which the CSP forbids; every browser the console supports has modulepreload
    modulePreload: { polyfill: false },
    // no data: URIs for assets: each is a hashed file, cached for a year
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
