// The dashboard UI: built into dist/web and served by the gateway at /dashboard (no CDN, offline).
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/dashboard/",
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    // Inline nothing: the page's Content-Security-Policy allows only same-origin files.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    // `npx vite --config web/vite.config.ts` during UI work; API calls go to a local gateway.
    proxy: { "/dashboard/api": "http://127.0.0.1:8080" },
  },
});
