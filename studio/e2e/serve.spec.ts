// The studio in `sr serve` itself: `cargo xtask studio-e2e` starts `sr serve approve.sr`
// with the scripted model server (sr-llm's mock) and sets SR_SERVE_URL.
import { expect, type Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "./console";

const screenshots = process.env.SR_STUDIO_SCREENSHOTS;

async function shot(page: Page, name: string) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `studio-${name}.png`) });
}

const serve = process.env.SR_SERVE_URL;
test.skip(!serve, "SR_SERVE_URL is not set: run the tests with `cargo xtask studio-e2e`");
test.use({ baseURL: serve });

test("sr serve serves the studio at / with its CSP, favicon and app addresses", async ({ page, consoleErrors }) => {
  const response = await page.goto("/");
  expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
  await expect(page.getByRole("heading", { name: "Runs" })).toBeVisible();
  await expect(page.getByRole("alert")).toHaveCount(0);
  expect((await page.request.get("/favicon.svg")).headers()["content-type"]).toBe("image/svg+xml");
  const app = await page.request.get("/runs/no-such-run");
  expect(app.status()).toBe(200);
  expect(await app.text()).toContain('<div id="app">');
  // The API's own 404 stays JSON.
  const missing = await page.request.get("/v1/no-such-route");
  expect(missing.status()).toBe(404);
  await page.goto("/workloads");
  await expect(page.getByRole("heading", { name: "approve" })).toBeVisible();
  await expect(page.getByRole("alert")).toHaveCount(0);
  expect(consoleErrors).toEqual([]);
});

/** Reads a run's event stream from Node: each event's arrival time by its type. */
async function watch(url: string, until: string): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const response = await fetch(url, { headers: { accept: "text/event-stream" } });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return seen;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const data = buffer.slice(0, end).split("\n").find((line) => line.startsWith("data:"));
      buffer = buffer.slice(end + 2);
      if (!data) continue;
      const event = JSON.parse(data.slice(5));
      if (!seen.has(event.type)) seen.set(event.type, Date.now());
      if (event.type === until) {
        void reader.cancel();
        return seen;
      }
    }
  }
}

test("a run of sr serve: its events live on the page within a second, and the answer from the page resumes it", async ({
  page,
  consoleErrors,
}) => {
  const started = await page.request.post("/v1/runs", { data: { workload: "approve", prompt: "Ada" } });
  expect(started.ok(), await started.text()).toBeTruthy();
  const { id } = await started.json();
  await page.goto(`/runs/${id}`);
  // The UUID is shortened, whole on hover; the entry the API's request left out is the default, recorded.
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Run ${id.slice(0, 8)}…Copy`);
  await expect(page.getByRole("heading", { level: 1 }).locator(`[title="${id}"]`)).toBeVisible();
  await expect(page.getByTestId("run-entry")).toHaveText("approve · main");
  // The model streams its draft slowly (the script spaces its chunks): the question comes
  // after the page is open, and must be on it within a second of the stream's event.
  const asked = watch(`${serve}/v1/runs/${id}/events`, "human_input_requested");
  const seen = await asked;
  const emitted = seen.get("human_input_requested")!;
  await expect(page.getByTestId("question")).toHaveText("Approve the draft?", { timeout: 1000 });
  const latency = Date.now() - emitted;
  console.log(`sr serve: the question was on the page ${latency} ms after the event stream had it`);
  expect(latency).toBeLessThan(1000);
  await expect(page.getByRole("option").filter({ hasText: "Dear Ada, hello." }).first()).toBeVisible();

  await page.getByLabel("Your answer").fill("ship it");
  await page.getByRole("button", { name: "Answer" }).click();
  await expect(page.getByTestId("run-status")).toHaveText("done", { timeout: 15_000 });
  // The pause ended with a `run_finished` (paused), the resumed run with its own.
  await expect(page.getByRole("option").filter({ hasText: "run_finished" }).filter({ hasText: "completed" })).toBeVisible();
  await expect(page.getByRole("option").filter({ hasText: "run_finished" }).filter({ hasText: "paused" })).toBeVisible();
  const run = await (await page.request.get(`/v1/runs/${id}`)).json();
  expect(run.status).toBe("done");
  expect(JSON.stringify(run.result)).toContain("Polished");

  // Its session's page lists it.
  await page.goto(`/sessions/${run.session}`);
  await expect(page.locator(`a:has([data-id="${id}"])`)).toBeVisible();
  await expect(page.getByRole("list", { name: "Turns" })).toContainText("Ada");
  await expect(page.getByRole("alert")).toHaveCount(0);

  // The runs list (studio_api's GET /v1/runs) shows it, linked.
  await page.goto("/runs");
  const row = page.getByRole("row").filter({ has: page.locator(`[data-id="${id}"]`) });
  await expect(row).toContainText("done");
  await expect(row).toContainText("approve");
  await expect(row).toContainText("main");
  await row.locator(`a:has([data-id="${id}"])`).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${id}$`));
  expect(consoleErrors).toEqual([]);
});

test("time travel in sr serve: the state at an event, and a fork from it with a replaced reply", async ({
  page,
  consoleErrors,
}) => {
  // The run the test above answered: draft, question, polish.
  const runs = (await (await page.request.get("/v1/runs?status=done")).json()).runs as { id: string; workload: string }[];
  const original = runs.find((r) => r.workload === "approve");
  expect(original, "the answered run of the test above").toBeTruthy();
  const id = original!.id;
  const text = await (await page.request.get(`/v1/runs/${id}/events`)).text();
  const events = text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
  // The polish's request: the second model call, after the answer.
  const polish = events.filter((e) => e.type === "model_request")[1];
  expect(polish, text).toBeTruthy();

  await page.goto(`/runs/${id}`);
  const row = page.getByRole("option").filter({ hasText: "model_request" }).nth(1);
  await row.click();
  const state = page.getByRole("region", { name: `State at event ${polish.seq}` });
  await expect(state.getByTestId("moment-status")).toContainText("This run has finished (done).", { timeout: 15_000 });
  await expect(state.getByTestId("moment-status")).toContainText("it was running");
  // The state panel fits the window at 1280 px: nothing to scroll sideways.
  const details = page.getByRole("region", { name: "Selected event" });
  const overflow = await details.evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow, "the selected event's panel overflows").toBeLessThanOrEqual(0);
  expect(page.viewportSize()?.width).toBe(1280);
  const variables = state.getByRole("table", { name: `Variables of main at event ${polish.seq}` });
  await expect(variables).toContainText("Dear Ada, hello.");
  await expect(variables).toContainText("ship it");
  await expect(state).toContainText("The work directory is empty.");

  // The variable box starts with the chosen variable's value there, as JSON.
  await state.getByLabel("Edit a variable (optional)").selectOption("draft");
  await expect(state.getByLabel(/^New value of draft/)).toHaveValue('"Dear Ada, hello."');
  await state.getByLabel("Edit a variable (optional)").selectOption("");
  await state.getByLabel("Replace the model's reply (optional)").fill("Forked: a reply of my own.");
  const scan = await new AxeBuilder({ page }).analyze();
  const serious = scan.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await shot(page, "run-travel");
  await state.getByRole("button", { name: "Fork from here" }).click();
  await expect(page).not.toHaveURL(new RegExp(`/runs/${id}$`));
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("run-status")).toHaveText("done", { timeout: 15_000 });
  await expect(page.getByRole("option").filter({ hasText: "Forked: a reply of my own." }).first()).toBeVisible();
  const fork = await (await page.request.get(page.url().replace(/.*\/runs\//, "/v1/runs/"))).json();
  expect(fork.result).toBe("Forked: a reply of my own.");
  // The reply it replaced is streamed nowhere in the fork, and the fork says where it came from.
  await expect(page.getByRole("option").filter({ hasText: "Polished" })).toHaveCount(0);
  const from = page.getByTestId("forked-from");
  await expect(from).toContainText(`Forked from run ${id.slice(0, 8)}… after its event ${polish.seq}`);
  await expect(from).toContainText("the model's reply replaced by “Forked: a reply of my own.”");
  await expect(page.getByRole("alert")).toHaveCount(0);
  await page.goto("/runs");
  const listed = page.getByRole("row").filter({ has: page.locator(`[data-id="${fork.id}"]`) });
  await expect(listed.getByTestId("forked-from")).toHaveText(`fork of ${id.slice(0, 8)}… at event ${polish.seq}: reply replaced`);
  await listed.getByRole("link", { name: `${id.slice(0, 8)}…` }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${id}$`));
  await expect(page.getByTestId("forked-from")).toHaveCount(0);
  // `cargo xtask studio-e2e` then checks the scripted model server saw two requests in
  // all: the original's; the state view and the fork made none.
  expect(consoleErrors).toEqual([]);
});

test("evaluations sr eval ran on sr serve: the page shows the results' numbers, and a case's run opens with its events", async ({
  page,
  consoleErrors,
}) => {
  // `cargo xtask studio-e2e` ran `sr eval greet.jsonl --workload greet.sr --server URL`
  // against this server before the tests: two cases, one reply that passes one of them.
  const file = process.env.SR_EVAL_RESULTS;
  expect(file, "SR_EVAL_RESULTS: the results.json of sr eval --server").toBeTruthy();
  const results = JSON.parse(readFileSync(file!, "utf8")) as { cases: { id: string; run?: string }[] };
  const shipped = results.cases.find((c) => c.id === "shipped");
  expect(shipped?.run, "each case run names its run on the server").toMatch(/^[0-9a-f-]{36}$/);

  await page.goto("/evals");
  await page.getByLabel("Results (results.json of sr eval)").setInputFiles(file!);
  const row = page.getByRole("table", { name: "Summary per variant" }).getByRole("row").filter({ hasText: "greet" });
  // One of two passed; no findings scorer; 30 + 6 tokens a call (the scripted usage).
  await expect(row.getByRole("cell").nth(0)).toHaveText("greet.sr");
  await expect(row.getByRole("cell").nth(1)).toHaveText("1/2");
  await expect(row.getByRole("cell").nth(2)).toHaveText("50.0%");
  await expect(row.getByRole("cell").nth(3)).toHaveText("0.500");
  await expect(row.getByRole("cell").nth(4)).toHaveText("—");
  await expect(row.getByRole("cell").nth(7)).toHaveText("72");
  const cases = page.getByRole("table", { name: "Cases" });
  const passed = cases.getByRole("row").filter({ has: page.getByRole("cell", { name: "shipped", exact: true }) });
  const failed = cases.getByRole("row").filter({ has: page.getByRole("cell", { name: "cancelled", exact: true }) });
  await expect(passed).toContainText("passed");
  await expect(failed).toContainText("failed");
  await expect(page.getByRole("alert")).toHaveCount(0);

  // The case's run link opens the server's run, with its events.
  await passed.getByRole("link", { name: `Run ${shipped!.run}` }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${shipped!.run}$`));
  await expect(page.getByTestId("run-status")).toHaveText("done", { timeout: 15_000 });
  await expect(page.getByRole("option").filter({ hasText: "run_started" })).toBeVisible();
  await expect(page.getByRole("option").filter({ hasText: "Order 7 has shipped." }).first()).toBeVisible();
  await expect(page.getByRole("option").filter({ hasText: "run_finished" })).toBeVisible();
  expect(consoleErrors).toEqual([]);
});
