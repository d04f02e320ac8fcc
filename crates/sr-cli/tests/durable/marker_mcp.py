# A stdio MCP server with one tool, `ping`, that notes in the file named by
# argv[1] when it starts ("started") and when its input ends ("closed").
import json
import sys

log = sys.argv[1]


def note(what):
    with open(log, "a") as f:
        f.write(what + "\n")


note("started")
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "marker", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "description": "Answers pong", "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
note("closed")
