"""A sample A2A agent built with the official Python SDK (a2a-sdk 1.3.0), for
crates/sr-cli/tests/a2a_client.rs: `.sr` agents call it through an `a2a` tool.

Usage: sample_server.py KEY. It listens on a free loopback port, prints
`listening on http://127.0.0.1:PORT` and serves until killed. Every request
needs `Authorization: Bearer KEY` (the card too, so that a test sees the key
sent with the card request).

What it answers, by the text of the message:
- `ask: QUESTION`: the task waits for input (`input-required`), asking QUESTION;
- `fail: WHY`: the task fails, its status message WHY;
- `slow: TEXT`: as for anything else, but an hour later (a test kills its caller);
- anything else: a completed task with a text artifact `reviewed: TEXT` and a
  data artifact `{"words": N}`.

Every task first goes `working` with the status message `reading it`: a
streaming client (the card says it streams) sees it as an update.
"""

import asyncio
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette
from starlette.responses import JSONResponse


class Reviewer(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                new_task(context.task_id, context.context_id, pb.TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        # An intermediate update with a text, which a streaming client sees.
        await updater.start_work(new_text_message("reading it", context_id=context.context_id, task_id=context.task_id))
        if text.startswith("ask: "):
            question = new_text_message(text[5:], context_id=context.context_id, task_id=context.task_id)
            await updater.requires_input(question)
            return
        if text.startswith("fail: "):
            why = new_text_message(text[6:], context_id=context.context_id, task_id=context.task_id)
            await updater.failed(why)
            return
        if text.startswith("slow: "):
            await asyncio.sleep(3600)
        await updater.add_artifact([new_text_part(f"reviewed: {text}")], name="review")
        await updater.add_artifact([new_data_part({"words": len(text.split())})], name="stats")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def card(url: str) -> pb.AgentCard:
    return pb.AgentCard(
        name="reviewer",
        description="Reviews what it is sent.",
        version="1.0.0",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[pb.AgentSkill(id="review", name="review", description="Reviews a text.", tags=["review"])],
    )


def main() -> None:
    key = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    agent_card = card(f"{base}/a2a")
    handler = DefaultRequestHandlerV2(agent_executor=Reviewer(), task_store=InMemoryTaskStore(), agent_card=agent_card)
    app = Starlette(routes=[*create_agent_card_routes(agent_card), *create_jsonrpc_routes(handler, "/a2a")])

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {key}".encode():
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    print(f"listening on {base}", flush=True)
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning"))
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
