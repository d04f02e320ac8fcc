"""StreetRace sandbox driver: runs an agent's Python steps in one persistent namespace.

Started as `python3 -I -B driver.py SOCKET`; the first line of stdin is the run token.
Everything it says to the host goes over the unix socket as newline-delimited JSON:
agent output, tool calls, the final answer and each step's outcome. The agent's code
runs with its own builtins (guarded `__import__`, no `exec`/`eval`/`compile`), so the
allowlist applies to the agent's imports and not to the standard library's own.
"""

import _thread
import ast
import builtins
import json
import linecache
import math
import os
import select
import signal
import socket
import sys
import traceback
import types

PROTOCOL = 1
TRACEBACK_LIMIT = 8192
RESULT_LIMIT = 2000
CHUNK = 8192


class StepTimeout(BaseException):
    """Raised into the agent's code when its step runs out of time."""


class FinalAnswer(BaseException):
    """Stops the step once `final_answer` has sent its value."""


class PolicyViolation(ImportError):
    """An import or operation that the sandbox policy forbids."""


class ToolError(Exception):
    """A tool call that failed; `tool` names the tool."""

    def __init__(self, tool, message):
        super().__init__(message)
        self.tool = tool


class Channel:
    """The connection to the host: one JSON object per line."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.max_line = 1 << 20

    def send(self, message):
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self.sock.sendall(line.encode("utf-8", "replace") + b"\n")

    def recv(self):
        line = self.reader.readline(self.max_line + 1)
        if not line:
            return None
        if not line.endswith(b"\n"):
            raise SystemExit("sandbox driver: the host sent an oversized message")
        return json.loads(line)


class Clock:
    """The step's wall-clock budget, delivered as `StepTimeout` by SIGALRM.

    The alarm is deferred while the driver itself talks to the host, so a timeout
    never cuts a message in half, and it is paused during tool calls, whose time
    the host limits separately.
    """

    def __init__(self):
        self.armed = False
        self.critical = 0
        self.pending = False
        signal.signal(signal.SIGALRM, self.on_alarm)

    def on_alarm(self, signum, frame):
        if not self.armed:
            return
        if self.critical:
            self.pending = True
            return
        raise StepTimeout()

    def start(self, seconds):
        self.pending = False
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def stop(self):
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.pending = False

    def pause(self):
        return signal.setitimer(signal.ITIMER_REAL, 0)[0]

    def resume(self, remaining):
        if remaining > 0:
            signal.setitimer(signal.ITIMER_REAL, remaining)

    def enter(self):
        self.critical += 1

    def leave(self):
        self.critical -= 1
        if not self.critical and self.pending:
            self.pending = False
            raise StepTimeout()


class Output:
    """The agent's stdout and stderr: counted, truncated, streamed line by line."""

    def __init__(self, channel, clock, limit):
        self.channel = channel
        self.clock = clock
        self.limit = limit
        self.begin(False)

    def begin(self, quiet):
        self.quiet = quiet
        self.written = {"stdout": 0, "stderr": 0}
        self.dropped = {"stdout": 0, "stderr": 0}
        self.stream = None
        self.parts = []
        self.size = 0

    def write(self, stream, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.clock.enter()
        try:
            data = text.encode("utf-8", "replace")
            room = max(self.limit - self.written[stream], 0)
            if len(data) > room:
                self.dropped[stream] += len(data) - room
                data = data[:room]
            self.written[stream] += len(data)
            if data and not self.quiet:
                if self.stream != stream:
                    self.flush_locked()
                self.stream = stream
                kept = data.decode("utf-8", "ignore")
                # Pieces of at most CHUNK characters keep every message small.
                for start in range(0, len(kept), CHUNK):
                    piece = kept[start : start + CHUNK]
                    self.parts.append(piece)
                    self.size += len(piece)
                    if self.size >= CHUNK:
                        self.flush_locked()
                if "\n" in kept:
                    self.flush_locked()
        finally:
            self.clock.leave()
        return len(text)

    def flush(self):
        self.clock.enter()
        try:
            self.flush_locked()
        finally:
            self.clock.leave()

    def flush_locked(self):
        if self.parts:
            self.channel.send({"type": "output", "stream": self.stream, "text": "".join(self.parts)})
            self.parts = []
            self.size = 0


class Stream:
    """What the agent's `sys.stdout` / `sys.stderr` and `print` write to."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, output, name):
        self.output = output
        self.name = name

    def write(self, text):
        return self.output.write(self.name, text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self.output.flush()

    def isatty(self):
        return False

    def writable(self):
        return True

    def readable(self):
        return False


class Allowlist:
    """The same allowlist as the host's static check: exact names, `pkg.*`, `*`."""

    def __init__(self, exact, subtrees, everything):
        self.exact = set(exact)
        self.subtrees = set(subtrees)
        self.everything = everything

    def allows(self, name):
        if self.everything or name in self.exact:
            return True
        parts = name.split(".")
        return any(".".join(parts[:i]) in self.subtrees for i in range(len(parts), 0, -1))


def jsonable(value, depth=0):
    """A JSON-safe copy: tuples and sets become lists, other objects their `str`."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth > 64:
        return str(value)
    if isinstance(value, dict):
        return {key if isinstance(key, str) else str(key): jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item, depth + 1) for item in value]
    return str(value)


def blocked(name):
    def refuse(*args, **kwargs):
        raise PolicyViolation(f"{name}() is not allowed in the sandbox")

    refuse.__name__ = name
    return refuse


class Driver:
    def __init__(self, channel, config):
        self.channel = channel
        self.clock = Clock()
        self.allow = Allowlist(config["allow"], config["allow_subtrees"], config["allow_all"])
        self.max_request = config["max_request"]
        self.output = Output(channel, self.clock, config["max_output"])
        self.final_sent = False
        self.real_import = builtins.__import__

        # The guard replaces the real `__import__` too, as the agent's code can reach the
        # builtins module (`print.__self__`); it checks only imports made by that code.
        builtins.__import__ = self.guarded_import
        user_builtins = dict(builtins.__dict__)
        for name in ("exec", "eval", "compile", "breakpoint"):
            user_builtins[name] = blocked(name)
        if not config["allow_open"]:
            user_builtins["open"] = blocked("open")
        self.module = types.ModuleType("__main__")
        self.module.__dict__["__builtins__"] = user_builtins
        sys.modules["__main__"] = self.module
        self.globals = self.module.__dict__

        namespace = {"__name__": "sr_tools", "_call": self.call_tool}
        exec(compile(config["stubs"], "<tools>", "exec"), namespace)
        self.injected = {name: namespace[name] for name in config["functions"]}
        self.injected["final_answer"] = self.final_answer
        self.injected["ToolError"] = ToolError

        sys.stdout = Stream(self.output, "stdout")
        sys.stderr = Stream(self.output, "stderr")
        sys.stdin = None
        self.install_audit_hook()

    def install_audit_hook(self):
        """Refuses processes, sockets and ctypes unless their modules are allowed.

        The events are refused whatever code raises them: the agent's own, or the
        standard library's when the agent got it to do its bidding. Without
        `subprocess`, `_posixsubprocess` cannot be imported either: its `fork_exec`
        starts a process and raises no event of its own. Installed after the
        driver's own socket exists; audit hooks cannot be removed.
        """
        events = set()
        modules = set()
        if not self.allow.allows("subprocess"):
            events.update(
                ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")
            )
            modules.add("_posixsubprocess")
            # Imported again, it raises the import event.
            sys.modules.pop("_posixsubprocess", None)
        if not self.allow.allows("socket"):
            events.add("socket.__new__")
        if not self.allow.allows("ctypes"):
            events.update(("ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "ctypes.call_function"))
        # Immutable: code that reaches the sets (gc.get_referents) cannot empty them.
        events = frozenset(events)
        modules = frozenset(modules)

        def hook(event, args):
            if event in events:
                raise PolicyViolation(f"{event} is not allowed in the sandbox")
            if event == "import" and args[0] in modules:
                raise PolicyViolation(f"import of '{args[0]}' is not allowed in the sandbox")

        sys.addaudithook(hook)

    def guarded_import(self, name, globals=None, locals=None, fromlist=(), level=0):
        try:
            caller = sys._getframe(1).f_globals
        except ValueError:
            caller = None
        if caller is not self.globals:
            return self.real_import(name, globals, locals, fromlist, level)
        if level:
            raise PolicyViolation("relative imports are not available in the sandbox")
        names = [item for item in (fromlist or ()) if item != "*"]
        whole = not fromlist or "*" in fromlist
        if not self.allow.allows(name) and (whole or not all(self.allow.allows(f"{name}.{n}") for n in names)):
            raise PolicyViolation(f"import of '{name}' is not allowed in the sandbox")
        module = self.real_import(name, globals, locals, fromlist, level)
        for item in names:
            value = getattr(module, item, None)
            if isinstance(value, types.ModuleType) and not self.allow.allows(value.__name__):
                raise PolicyViolation(f"import of '{value.__name__}' is not allowed")
        return module

    def call_tool(self, name, args):
        self.clock.enter()
        remaining = self.clock.pause()
        try:
            self.output.flush_locked()
            try:
                request = json.dumps(
                    {"type": "tool_call", "name": name, "args": args}, ensure_ascii=False, allow_nan=False
                ).encode("utf-8", "replace")
            except (TypeError, ValueError) as error:
                raise TypeError(f"arguments of {name}() must be JSON values: {error}") from None
            if len(request) > self.max_request:
                raise ToolError(name, f"arguments of {name}() exceed {self.max_request} bytes")
            self.channel.sock.sendall(request + b"\n")
            reply = self.channel.recv()
        finally:
            self.clock.resume(remaining)
            self.clock.leave()
        if not isinstance(reply, dict) or reply.get("type") != "tool_result":
            raise SystemExit("sandbox driver: expected a tool result from the host")
        if reply.get("ok"):
            return reply.get("value")
        raise ToolError(name, str(reply.get("error")))

    def final_answer(self, value):
        """Sends `value` as the agent's answer and stops the step."""
        message = {"type": "final", "value": jsonable(value)}
        if len(json.dumps(message, ensure_ascii=False).encode("utf-8", "replace")) > self.max_request:
            raise ValueError(f"final answer exceeds {self.max_request} bytes")
        self.clock.enter()
        try:
            self.output.flush_locked()
            self.channel.send(message)
            self.final_sent = True
        finally:
            self.clock.leave()
        raise FinalAnswer()

    def run(self, message):
        filename = f"<step {message['step']}>"
        self.output.begin(bool(message.get("replay")))
        self.final_sent = False
        self.globals.update(self.injected)
        try:
            outcome = self.execute(message["code"], filename, message["timeout"])
            self.clock.stop()
        except StepTimeout:
            # The alarm is one-shot, so this catches the one that got past `execute`.
            self.clock.stop()
            outcome = {"kind": "timeout"}
        if self.final_sent:
            outcome = {"kind": "final"}
        self.output.flush()
        return outcome

    def execute(self, code, filename, timeout):
        try:
            tree = ast.parse(code, filename)
            tail = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                tail = compile(ast.Expression(tree.body.pop().value), filename, "eval")
            body = compile(tree, filename, "exec")
        except SyntaxError as error:
            return {"kind": "syntax", "message": error.msg, "line": error.lineno, "column": error.offset}
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        self.clock.start(timeout)
        try:
            exec(body, self.globals)
            result = None
            if tail is not None:
                value = eval(tail, self.globals)
                if value is not None:
                    result = repr(value)[:RESULT_LIMIT]
            self.clock.stop()
            return {"kind": "ok", "result": result}
        except FinalAnswer:
            return {"kind": "final"}
        except StepTimeout:
            return {"kind": "timeout"}
        except PolicyViolation as error:
            self.clock.stop()
            return {"kind": "policy", "message": str(error), **self.describe(error, filename)}
        except ToolError as error:
            self.clock.stop()
            return {"kind": "tool_error", "tool": error.tool, "message": str(error), **self.describe(error, filename)}
        except BaseException as error:
            self.clock.stop()
            return {"kind": "error", "type": type(error).__name__, "message": str(error)[:RESULT_LIMIT],
                    **self.describe(error, filename)}

    def describe(self, error, filename):
        """The traceback from the agent's first frame on, and the failing line of the step."""
        try:
            summary = traceback.TracebackException.from_exception(error)
            frames = list(summary.stack)
            first = next((i for i, frame in enumerate(frames) if frame.filename.startswith("<step")), 0)
            summary.stack = traceback.StackSummary.from_list(frames[first:])
            line = next((frame.lineno for frame in reversed(frames) if frame.filename == filename), None)
            text = "".join(summary.format())
            if len(text) > TRACEBACK_LIMIT:
                text = "...\n" + text[-TRACEBACK_LIMIT:]
            return {"traceback": text, "line": line}
        except BaseException:
            return {"traceback": f"{type(error).__name__}: (traceback unavailable)\n", "line": None}

    def serve(self):
        while True:
            message = self.channel.recv()
            if message is None or message.get("type") == "shutdown":
                return
            if message.get("type") != "exec":
                raise SystemExit(f"sandbox driver: unexpected message {message.get('type')!r}")
            outcome = self.run(message)
            dropped = self.output.dropped
            self.channel.send({"type": "done", "outcome": outcome, "dropped": dropped})


def watch(sock):
    """Exits when the host hangs up, even while the agent's code is busy."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP)
    while True:
        for _, events in poller.poll():
            if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL):
                os._exit(0)


def main():
    token = sys.stdin.readline().strip()
    channel = Channel(sys.argv[1])
    channel.send({"type": "hello", "token": token, "protocol": PROTOCOL, "python": sys.version.split()[0]})
    del token
    welcome = channel.recv()
    if not isinstance(welcome, dict) or welcome.get("type") != "welcome":
        sys.exit("sandbox driver: the host refused the connection")
    channel.max_line = welcome["config"]["max_reply"]
    _thread.start_new_thread(watch, (channel.sock,))
    Driver(channel, welcome["config"]).serve()


if __name__ == "__main__":
    main()
