"""Upstream StreetRace as a differential oracle.

Reads JSON lines `{"id", "source"}` on stdin and writes, per case,
`{"id", "ok", "code", "line", "column", "message"}` with upstream's first syntax
diagnostic (parse stage only) or `ok: true`. Needs `pip install streetrace==0.1.24`
(Python 3.12); used by `cargo xtask differential`, never by the test suite.
"""

import json
import signal
import sys

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken
from lark.indenter import DedentError
from streetrace.dsl.compiler import normalize_source
from streetrace.dsl.grammar.parser import ParserFactory


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def verdict(parser, source):
    try:
        parser.parse(normalize_source(source))
        return {"ok": True}
    except UnexpectedCharacters as e:
        return {"ok": False, "code": "E0007", "line": e.line, "column": e.column, "message": "invalid character"}
    except UnexpectedEOF:
        return {"ok": False, "code": "E0007", "line": -1, "column": -1, "message": "unexpected end of input"}
    except UnexpectedToken as e:
        return {"ok": False, "code": "E0007", "line": e.line, "column": e.column, "message": f"unexpected token {e.token!r}"}
    except DedentError as e:
        return {"ok": False, "code": "E0008", "line": 1, "column": 0, "message": str(e)}
    except AssertionError:
        return {"ok": False, "code": "crash", "line": 0, "column": 0, "message": "indenter assertion (unbalanced bracket)"}


def main():
    parser = ParserFactory.create()
    signal.signal(signal.SIGALRM, on_alarm)
    for line in sys.stdin:
        case = json.loads(line)
        signal.alarm(10)
        try:
            result = verdict(parser, case["source"])
        except Timeout:
            result = {"ok": False, "code": "timeout", "line": 0, "column": 0, "message": "upstream took over 10 s"}
        except Exception as e:  # noqa: BLE001
            result = {"ok": False, "code": "crash", "line": 0, "column": 0, "message": repr(e)[:200]}
        finally:
            signal.alarm(0)
        result["id"] = case["id"]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
