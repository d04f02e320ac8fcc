#!/usr/bin/env bash
# The DebugClient tests of sr-dap: builds the adapter (unless $SR_DAP names
# one), installs the pinned npm packages (`npm ci`), runs mocha. Without node
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

if [ -z "${SR_DAP:-}" ]; then
    cd "$root"
    cargo build --quiet -p sr-dap --bin sr-dap
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$root/$target" ;; esac
    export SR_DAP="$target/debug/sr-dap"
fi

cd "$here"
npm ci --no-audit --no-fund --loglevel=error
npm test
