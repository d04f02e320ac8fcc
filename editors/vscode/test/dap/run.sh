#!/usr/bin/env bash
# The DebugClient tests of `sr dap`: builds `sr` (unless $SR_BIN names it),
# installs the pinned npm packages (`npm ci`), runs mocha. Without node
# and npm the tests are skipped loudly, except in CI (CI=true), where that
# is a failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "${CI:-}" = "true" ]; then
        echo "error: the sr-dap DebugClient tests need node (>= 18.18) and npm" >&2
        exit 1
    fi
    echo "SKIPPED: the sr-dap DebugClient tests need node (>= 18.18) and npm, which are not installed" >&2
    exit 0
fi

if [ -z "${SR_BIN:-}" ]; then
    cd "$root"
    cargo build --quiet -p sr-cli --bin sr
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$root/$target" ;; esac
    export SR_BIN="$target/debug/sr"
fi
SR_BIN=$(realpath "$SR_BIN")
export SR_BIN

cd "$here"
npm ci --no-audit --no-fund --loglevel=error
npm test
