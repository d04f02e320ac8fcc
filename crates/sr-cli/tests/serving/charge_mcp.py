# A stdio MCP server with one tool, `charge`, that is not idempotent: each
# call appends the idempotency key of its request (`_meta`) to the file
# named by argv[1], at once. The first call ever (the file was empty) then
# waits 60 s before answering, so that a test can kill the run mid-call;
# later calls answer at once. With a second argument N, the server notes
# its start in the file argv[1] + ".started" and answers `initialize` only
# N seconds later (a server slow to start).
import json
import sys

import time

log = sys.argv[1]
slow_start = float(sys.argv[2]) if len(sys.argv) > 2 else 0
if slow_start:
    with open(log + ".started", "w") as f:
        f.write("started\n")
KEY = "streetrace.dev/idempotency-key"
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        time.sleep(slow_start)
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "charge", "version": "1.0.0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"cents": {"type": "integer"}}}
        result = {"tools": [{"name": "charge", "description": "Charges a card", "inputSchema": schema}]}
    elif method == "tools/call":
        key = (message["params"].get("_meta") or {}).get(KEY, "")
        try:
            with open(log) as f:
                first = f.read() == ""
        except FileNotFoundError:
            first = True
        with open(log, "a") as f:
            f.write(key + "\n")
        if first:
            time.sleep(60)
        result = {"content": [{"type": "text", "text": "charged"}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
