// A web page of another origin against the default (loopback, key-less) `sr serve`:
// `cargo xtask studio-e2e` sets SR_SERVE_URL. The page is served from another loopback
// port and tries what a browser lets any page do without a preflight: a `text/plain`
// fetch and a plain HTML form, both posting a run; then a DNS-rebound name (Chromium
// maps rebind.test to 127.0.0.1) reads the runs as if same-origin. Each is judged by
// effect: the server's run list is the same after, and the page read nothing.
import { chromium, expect, test } from "@playwright/test";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const serve = process.env.SR_SERVE_URL;
test.skip(!serve, "SR_SERVE_URL is not set: run the tests with `cargo xtask studio-e2e`");

const run = JSON.stringify({ workload: "greet", prompt: "from another origin" });

/** The other origin's page: a no-preflight fetch and a text/plain form, both at the API. */
function evilPage(target: string): string {
  // The form's one field, sent as `NAME=VALUE`, is a valid run request as text/plain forms send it.
  const [name, value] = ['{"workload": "greet", "prompt": "from a form', ' post"}'];
  return `<!doctype html><title>other origin</title>
<form id="f" method="post" enctype="text/plain" action="${target}/v1/runs">
<input type="hidden" name='${name}' value='${value}'></form>
<script>
window.fetched = fetch(${JSON.stringify(target + "/v1/runs")}, {
  method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(run)},
}).then(() => "sent", (e) => "failed: " + e);
</script>`;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function runIds(request: import("@playwright/test").APIRequestContext): Promise<string[]> {
  const answer = await request.get(`${serve}/v1/runs`);
  expect(answer.status()).toBe(200);
  return ((await answer.json()).runs as { id: string }[]).map((r) => r.id);
}

test("a page of another origin cannot start a run, and a rebound name reads nothing", async ({ request }) => {
  const before = await runIds(request);
  const other = createServer((_, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(evilPage(serve!));
  });
  const port = await listen(other);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--host-resolver-rules=MAP rebind.test 127.0.0.1"],
  });
  try {
    const page = await browser.newPage();
    // The fetch: sent (an opaque answer), refused by the server.
    await page.goto(`http://127.0.0.1:${port}/`);
    expect(await page.evaluate(() => (window as unknown as { fetched: Promise<string> }).fetched)).toBe("sent");
    // The form: the browser navigates to the server's refusal.
    const [posted] = await Promise.all([
      page.waitForNavigation(),
      page.evaluate(() => (document.getElementById("f") as HTMLFormElement).submit()),
    ]);
    expect(posted?.status()).toBe(403);
    expect(await page.textContent("body")).toContain("origin_refused");

    // Rebinding: rebind.test:PORT is now the server; the page there is same-origin with it.
    const target = new URL(serve!);
    const rebound = await page.goto(`http://rebind.test:${target.port}/`);
    expect(rebound?.status()).toBe(421);
    const read = await page.evaluate(async () => {
      const list = await fetch("/v1/runs");
      const start = await fetch("/v1/runs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workload: "greet", prompt: "rebound" }),
      });
      return { list: list.status, listed: await list.text(), start: start.status };
    });
    expect(read.list).toBe(421);
    expect(read.start).toBe(421);
    for (const id of before) expect(read.listed).not.toContain(id);
  } finally {
    await browser.close();
    other.close();
  }
  // By effect: the server's runs are the ones it had.
  expect(await runIds(request)).toEqual(before);
});
