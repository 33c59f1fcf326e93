import { defineConfig } from "vite";

// `base: "./"` keeps every asset URL relative, so the same dist/ works when the daemon serves
// it at `/` and when the tray app loads it as Tauri's frontendDist.
export default defineConfig({
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // One small bundle: no code splitting, so there are no chunk URLs to resolve.
    rollupOptions: { output: { manualChunks: undefined } },
  },
  server: {
    // `npm run dev` proxies the API to a running daemon (`metaclaw dev seed && metaclaw start`).
    proxy: {
      "/api": { target: process.env.METACLAW_URL ?? "http://127.0.0.1:30000", changeOrigin: false },
      "/login": { target: process.env.METACLAW_URL ?? "http://127.0.0.1:30000", changeOrigin: false },
    },
  },
});
