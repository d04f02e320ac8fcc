import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The build writes fixed file names into sr-studio's assets, which the crate embeds
// one by one: no hashes (the server revalidates them instead), one script, one style
// sheet, and no inline script or style in index.html (the CSP forbids both).
export default defineConfig({
  plugins: [svelte()],
  base: "/",
  build: {
    // `cargo xtask studio-check` builds elsewhere and compares.
    outDir: process.env.SR_STUDIO_OUT ?? "../crates/sr-studio/assets",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    rollupOptions: {
      output: {
        entryFileNames: "app.js",
        chunkFileNames: "app-[name].js",
        assetFileNames: "app[extname]",
        inlineDynamicImports: true,
      },
    },
  },
  server: {
    // `npm run dev` against a running `sr serve` (or the fixture server).
    proxy: { "/v1": process.env.SR_STUDIO_API ?? "http://127.0.0.1:8787" },
  },
});
