import { test as base, expect } from "@playwright/test";

// Every page's console is watched: an error or a CSP violation (Chromium reports those
// as console errors) fails the test that caused it.
export const test = base.extend<{ consoleErrors: string[] }>({
  consoleErrors: async ({ page }, use) => {
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(String(error)));
    await use(errors);
    expect(errors, "console errors").toEqual([]);
  },
});
