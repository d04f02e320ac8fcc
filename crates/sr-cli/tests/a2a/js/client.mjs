// The official A2A JavaScript SDK (@a2a-js/sdk, pinned by package-lock.json)
// as a client of `sr serve`, run by crates/sr-cli/tests/a2a.rs from the
// directory the SDK is installed in: it reads the card, sends a message and
// reads the result, and streams a task. Each step prints `ok STEP`.
// Environment: SR_A2A_BASE (the server's URL), SR_A2A_KEY (its API key).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const base = process.env.SR_A2A_BASE;
const key = process.env.SR_A2A_KEY;
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  return fetch(url, { ...init, headers });
};

const request = (text) => ({
  tenant: "",
  message: {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  }),
);
const client = await factory.createFromUrl(`${base}/a2a/hello/.well-known/agent-card.json`, "");
console.log("ok card");

const task = await client.sendMessage(request("Ada"));
assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(task));
assert.equal(task.artifacts[0].parts[0].content.value, "Hello, Ada.", JSON.stringify(task));
const got = await client.getTask({ tenant: "", id: task.id });
assert.equal(got.status.state, TaskState.TASK_STATE_COMPLETED);
console.log("ok send");

const kinds = [];
let last;
for await (const event of client.sendMessageStream(request("Bo"))) {
  kinds.push(event.payload.$case);
  last = event.payload;
  if (event.payload.$case === "artifactUpdate") {
    assert.equal(event.payload.value.artifact.parts[0].content.value, "Hi, Bo.");
  }
}
assert.equal(kinds[0], "task", kinds.join());
assert.ok(kinds.includes("artifactUpdate"), kinds.join());
assert.equal(last.$case, "statusUpdate");
assert.equal(last.value.status.state, TaskState.TASK_STATE_COMPLETED);
console.log("ok stream");
