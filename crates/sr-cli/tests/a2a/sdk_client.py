"""The official A2A Python SDK (a2a-sdk, pinned in .ci/setup) as a client of
`sr serve`, run by crates/sr-cli/tests/a2a.rs: it fetches and validates the
cards, sends a message and reads the result, streams a task, gets and lists
tasks, answers an input-required task, speaks 0.3 through the SDK's 0.3
transport, and cancels a running task. Every check is an assert; each step
prints `ok STEP` so the Rust test sees how far it got.

Usage: sdk_client.py BASE_URL API_KEY
"""

import asyncio
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict

BASE, KEY = sys.argv[1], sys.argv[2]
S = pb.TaskState


def ok(step):
    print(f"ok {step}", flush=True)


def message(text, task_id=None, context_id=None):
    m = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    if task_id:
        m.task_id = task_id
    if context_id:
        m.context_id = context_id
    return m


async def events(client, request):
    return [e async for e in client.send_message(request)]


def last_task(stream):
    """The task a non-streaming send answers with."""
    assert len(stream) == 1 and stream[0].HasField("task"), stream
    return stream[0].task


def text_of(task):
    return "".join(p.text for a in task.artifacts for p in a.parts)


async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60)

    # The cards: the SDK's parser reads them, and 0.3's model validates them.
    hello_card = await A2ACardResolver(http, f"{BASE}/a2a/hello").get_agent_card()
    assert hello_card.name == "hello", hello_card
    assert hello_card.capabilities.streaming and not hello_card.capabilities.push_notifications
    versions = [(i.protocol_binding, i.protocol_version) for i in hello_card.supported_interfaces]
    assert versions == [("JSONRPC", "1.0"), ("JSONRPC", "0.3")], versions
    assert hello_card.supported_interfaces[0].url == f"{BASE}/a2a/hello"
    assert [s.id for s in hello_card.skills] == ["main"], hello_card.skills
    assert "bearer" in hello_card.security_schemes
    assert hello_card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    raw = (await http.get(f"{BASE}/a2a/hello/.well-known/agent-card.json")).json()
    legacy = v03.AgentCard.model_validate(raw)
    assert legacy.url == f"{BASE}/a2a/hello" and legacy.capabilities.streaming, legacy
    ok("card")

    blocking = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(hello_card)
    streaming = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(hello_card)

    # Send, and the result.
    sent = last_task(await events(blocking, pb.SendMessageRequest(message=message("Ada"))))
    assert sent.status.state == S.TASK_STATE_COMPLETED, sent
    assert text_of(sent) == "Hello, Ada.", sent
    assert sent.context_id and sent.id
    ok("send")

    # A streamed task: the task, its status updates, its result, the end.
    stream = await events(streaming, pb.SendMessageRequest(message=message("Bo")))
    kinds = [e.WhichOneof("payload") for e in stream]
    assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
    assert "artifact_update" in kinds, kinds
    assert stream[-1].status_update.status.state == S.TASK_STATE_COMPLETED, stream[-1]
    artifact = next(e.artifact_update for e in stream if e.HasField("artifact_update"))
    assert artifact.artifact.parts[0].text == "Hi, Bo.", artifact
    streamed_id = stream[0].task.id
    ok("stream")

    # Get and list.
    got = await blocking.get_task(pb.GetTaskRequest(id=sent.id))
    assert got.status.state == S.TASK_STATE_COMPLETED and text_of(got) == "Hello, Ada.", got
    listed = await blocking.list_tasks(pb.ListTasksRequest(include_artifacts=True))
    ids = [t.id for t in listed.tasks]
    assert ids == [streamed_id, sent.id], ids
    assert text_of(listed.tasks[1]) == "Hello, Ada."
    in_context = await blocking.list_tasks(pb.ListTasksRequest(context_id=sent.context_id))
    assert [t.id for t in in_context.tasks] == [sent.id]
    try:
        await blocking.get_task(pb.GetTaskRequest(id="no-such-task"))
        raise AssertionError("a missing task was found")
    except Exception as e:  # the SDK's TaskNotFoundError
        assert type(e).__name__ == "TaskNotFoundError", repr(e)
    ok("get-list")

    # input-required, answered by the next message of the task.
    approve_card = await A2ACardResolver(http, f"{BASE}/a2a/approve").get_agent_card()
    approve = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(approve_card)
    first = await events(approve, pb.SendMessageRequest(message=message("Write to Bob")))
    paused = first[-1].status_update.status
    assert paused.state == S.TASK_STATE_INPUT_REQUIRED, first
    assert paused.message.parts[0].text == "Approve the draft?", paused
    task_id, context_id = first[0].task.id, first[0].task.context_id
    answered = await events(approve, pb.SendMessageRequest(message=message("warmer", task_id, context_id)))
    assert answered[0].task.id == task_id, answered[0]
    assert answered[-1].status_update.status.state == S.TASK_STATE_COMPLETED, answered
    done = await approve.get_task(pb.GetTaskRequest(id=task_id))
    assert text_of(done) == "Dear Bob, warmly.", done
    ok("input-required")

    # A2A 0.3, through the SDK's 0.3 transport: a card that offers only 0.3.
    legacy_card = pb.AgentCard()
    legacy_card.CopyFrom(hello_card)
    del legacy_card.supported_interfaces[0]
    old = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(legacy_card)
    assert type(old._transport).__name__ == "CompatJsonRpcTransport", type(old._transport)
    old_stream = await events(old, pb.SendMessageRequest(message=message("Cy")))
    assert old_stream[-1].status_update.status.state == S.TASK_STATE_COMPLETED, old_stream
    old_id = old_stream[0].task.id
    old_got = await old.get_task(pb.GetTaskRequest(id=old_id))
    assert text_of(old_got) == "Bonjour, Cy.", MessageToDict(old_got)
    old_blocking = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(legacy_card)
    old_sent = last_task(await events(old_blocking, pb.SendMessageRequest(message=message("Di"))))
    assert text_of(old_sent) == "Salut, Di.", old_sent
    ok("v0.3")

    # Cancel a running task (its model answers only after a minute).
    request = pb.SendMessageRequest(
        message=message("slow"), configuration=pb.SendMessageConfiguration(return_immediately=True)
    )
    queued = last_task(await events(blocking, request))
    for _ in range(600):
        state = (await blocking.get_task(pb.GetTaskRequest(id=queued.id))).status.state
        if state == S.TASK_STATE_WORKING:
            break
        await asyncio.sleep(0.05)
    assert state == S.TASK_STATE_WORKING, state
    await asyncio.sleep(0.5)
    cancelled = await blocking.cancel_task(pb.CancelTaskRequest(id=queued.id))
    assert cancelled.status.state == S.TASK_STATE_CANCELED, cancelled
    try:
        await blocking.cancel_task(pb.CancelTaskRequest(id=queued.id))
        raise AssertionError("an ended task was cancelled twice")
    except Exception as e:  # the SDK's TaskNotCancelableError
        assert type(e).__name__ == "TaskNotCancelableError", repr(e)
    ok("cancel")

    # Without the key, the endpoint refuses.
    bare = httpx.AsyncClient(timeout=60)
    refused = ClientFactory(ClientConfig(httpx_client=bare, streaming=False)).create(hello_card)
    try:
        await events(refused, pb.SendMessageRequest(message=message("no key")))
        raise AssertionError("a request without a key was served")
    except A2AClientError as e:
        assert "401" in str(e), repr(e)
    ok("auth")


asyncio.run(main())
