# A stdio MCP server with one tool, `bump`, whose side effect (a line appended
# to the file named by argv[1]) happens at once and whose answer comes after
# argv[2] seconds: a run killed in between was cut off mid-tool.
import json
import sys
import time

count, pause = sys.argv[1], float(sys.argv[2])
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "bump", "description": "Counts, slowly", "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        with open(count, "a") as f:
            f.write("x\n")
        time.sleep(pause)
        result = {"content": [{"type": "text", "text": "bumped"}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
