"""Upstream StreetRace `check` as a differential oracle for semantic analysis.

Reads JSON lines `{"id", "source"}` on stdin and writes, per case,
`{"id", "diagnostics": [{"code", "line", "column", "message", "help"}]}` with every
diagnostic `streetrace check` would report. Used by `cargo xtask differential
--semantic`, never by the test suite.
"""

import json
import signal
import sys

from streetrace.dsl.compiler import validate_dsl


def on_alarm(signum, frame):
    raise TimeoutError()


def main():
    signal.signal(signal.SIGALRM, on_alarm)
    for line in sys.stdin:
        case = json.loads(line)
        signal.alarm(20)
        try:
            diagnostics = [
                {
                    "code": d.code.value if d.code else None,
                    "line": d.line,
                    "column": d.column,
                    "message": d.message,
                    "help": d.help_text,
                }
                for d in validate_dsl(case["source"], "case.sr")
            ]
            result = {"diagnostics": diagnostics}
        except TimeoutError:
            result = {"error": "timeout"}
        except Exception as e:  # noqa: BLE001
            result = {"error": repr(e)[:200]}
        finally:
            signal.alarm(0)
        result["id"] = case["id"]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
