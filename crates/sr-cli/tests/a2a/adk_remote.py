"""Google ADK's RemoteA2aAgent (google-adk, pinned in .ci/setup) calling a
flow served by `sr serve`, run by crates/sr-cli/tests/a2a.rs. The flow asks
"Ship it?"; another agent of the ADK session speaks before the person
answers "yes", so ADK sends its words as context parts beside the answer:
the flow's `$human_input == "yes"` holds, and it reads the context from
`inbox/.context.txt`. Each step prints `ok STEP`.

Usage: adk_remote.py BASE_URL API_KEY
"""

import asyncio
import sys

import httpx
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.events import Event
from google.adk.runners import InMemoryRunner
from google.genai import types

BASE, KEY = sys.argv[1], sys.argv[2]
LAST = []


def ok(step):
    print(f"ok {step}", flush=True)


def said(text):
    return types.Content(role="user", parts=[types.Part(text=text)])


async def turn(runner, session, text):
    events = [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=said(text))]
    LAST[:] = events
    errors = [e.error_message for e in events if e.error_message]
    assert not errors, errors
    parts = [p for e in events if e.content for p in e.content.parts or [] if not p.thought]
    # ADK shows input-required as a call of a mock function with the question.
    asked = [p.function_call.args["input_required"] for p in parts if p.function_call]
    return "".join(p.text or "" for p in parts) + "".join(asked)


async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    remote = RemoteA2aAgent(
        name="gate", agent_card=f"{BASE}/a2a/adk_gate/.well-known/agent-card.json", httpx_client=http
    )
    runner = InMemoryRunner(agent=remote, app_name="adk-interop")
    session = await runner.session_service.create_session(app_name="adk-interop", user_id="u")

    asked = await turn(runner, session, "Ship the release notes")
    assert asked == "Ship it? Answer yes or no.", [e.model_dump(exclude_none=True) for e in LAST]
    ok("asked")

    # Another agent of the session speaks before the person answers.
    session = await runner.session_service.get_session(app_name="adk-interop", user_id="u", session_id=session.id)
    planner = Event(
        author="planner",
        invocation_id="planner-turn",
        content=types.Content(role="model", parts=[types.Part(text="The notes are ready.")]),
    )
    await runner.session_service.append_event(session, planner)
    answered = await turn(runner, session, "yes")
    assert answered.startswith("shipped after: "), [e.model_dump(exclude_none=True) for e in LAST]
    assert "The notes are ready." in answered and "[planner] said:" in answered, answered
    ok("answered")


asyncio.run(main())
