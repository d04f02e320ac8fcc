import { defineConfig } from "@playwright/test";

// The browser tests drive Debian's Chromium (no browser download) against the server
// that `SR_STUDIO_SERVER` names, started on a loopback port: `cargo xtask studio-e2e`
// builds it and sets both.
const port = Number(process.env.SR_STUDIO_PORT ?? 4791);
const server = process.env.SR_STUDIO_SERVER;
if (!server) throw new Error("SR_STUDIO_SERVER is not set: run the tests with `cargo xtask studio-e2e`");

export default defineConfig({
  testDir: "e2e",
  timeout: 30_000,
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  outputDir: process.env.SR_STUDIO_RESULTS ?? "test-results",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: "chromium",
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] },
  },
  webServer: {
    command: `${JSON.stringify(server)} 127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "ignore",
    stderr: "pipe",
  },
});
