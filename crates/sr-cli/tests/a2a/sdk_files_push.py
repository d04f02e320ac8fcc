"""The official A2A Python SDK (a2a-sdk) against `sr serve --push-host
127.0.0.1` serving `gated.sr`, run by crates/sr-cli/tests/a2a.rs: a message
with the client's own messageId and a file part starts a task (the file is
the run's `inbox/notes.txt`) with a push notification configuration; the
task asks a question; the answer is sent the way Google ADK's
RemoteA2aAgent sends it (the question again as "For context:" parts, then
the person's "yes"), so `$human_input == "yes"` holds, and the flow reads
the context from `inbox/.context.txt`; the run's written file comes back as
a file part; a webhook receiver here gets every status
change with the configuration's token and credentials, the first refused
and sent again. Each step prints `ok STEP`.

Usage: sdk_files_push.py BASE_URL API_KEY
"""

import asyncio
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import ParseDict

BASE, KEY = sys.argv[1], sys.argv[2]
S = pb.TaskState
RECEIVED = []


def ok(step):
    print(f"ok {step}", flush=True)


class Hook(BaseHTTPRequestHandler):
    """Records each notification; refuses the first with 503."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        RECEIVED.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(503 if len(RECEIVED) == 1 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


async def events(client, request):
    return [e async for e in client.send_message(request)]


async def main():
    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    hook_url = f"http://127.0.0.1:{hook.server_address[1]}/hook"
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60)

    card = await A2ACardResolver(http, f"{BASE}/a2a/gated").get_agent_card()
    assert card.capabilities.push_notifications, card.capabilities
    client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
    ok("card")

    first = pb.Message(
        message_id="client-msg-1",
        role=pb.ROLE_USER,
        parts=[
            pb.Part(text="Ship the release notes"),
            pb.Part(raw=b"v2 adds push", filename="../notes.txt", media_type="text/plain"),
        ],
    )
    push = pb.TaskPushNotificationConfig(
        url=hook_url,
        token="tok-1",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="hook-secret"),
    )
    configuration = pb.SendMessageConfiguration(task_push_notification_config=push)
    [asked] = await events(client, pb.SendMessageRequest(message=first, configuration=configuration))
    task = asked.task
    assert task.status.state == S.TASK_STATE_INPUT_REQUIRED, task
    assert task.status.message.parts[0].text == "Ship it? Answer yes or no.", task.status
    assert [m.message_id for m in task.history] == ["client-msg-1"], task.history
    assert task.history[0].parts[0].text == "Ship the release notes", task.history
    ok("message-id")

    # ADK's RemoteA2aAgent puts what other agents said before the person's text.
    answer = pb.Message(
        message_id="client-msg-2",
        role=pb.ROLE_USER,
        task_id=task.id,
        context_id=task.context_id,
        parts=[
            pb.Part(text="For context:"),
            pb.Part(text="[gated] said: Ship it? Answer yes or no."),
            pb.Part(text="yes"),
        ],
    )
    [done] = await events(client, pb.SendMessageRequest(message=answer))
    task = done.task
    assert task.status.state == S.TASK_STATE_COMPLETED, task
    result = next(a for a in task.artifacts if a.artifact_id == "result")
    assert result.parts[0].text == "shipped", result
    assert [m.message_id for m in task.history] == ["client-msg-1", "client-msg-2"], task.history
    ok("context")

    files = next(a for a in task.artifacts if a.artifact_id == "files")
    assert [(p.filename, p.raw, p.media_type) for p in files.parts] == [
        ("out/summary.md", b"Shipped: v2 adds push | For context:\n[gated] said: Ship it? Answer yes or no.\n", "text/markdown")
    ], files
    ok("files")

    configs = await client.list_task_push_notification_configs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert [c.url for c in configs.configs] == [hook_url], configs
    for _ in range(200):
        states = [b["statusUpdate"]["status"]["state"] for _, b in RECEIVED if "statusUpdate" in b]
        if states and states[-1] == "TASK_STATE_COMPLETED":
            break
        time.sleep(0.1)
    assert states[-1] == "TASK_STATE_COMPLETED", RECEIVED
    # Each change the follower saw, in order; one that came and went while a
    # notification was being retried is sent as the latest status.
    seen = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"]
    changes = [state for i, state in enumerate(states) if i == 0 or states[i - 1] != state]
    assert changes == sorted(changes, key=seen.index) and len(set(changes)) == len(changes), states
    assert RECEIVED[0][1] == RECEIVED[1][1], "the refused notification is sent again"
    for headers, body in RECEIVED:
        assert headers["x-a2a-notification-token"] == "tok-1", headers
        assert headers["authorization"] == "Bearer hook-secret", headers
        ParseDict(body, pb.StreamResponse())  # the SDK reads each as a stream response
    ok("push")
    hook.shutdown()


asyncio.run(main())
