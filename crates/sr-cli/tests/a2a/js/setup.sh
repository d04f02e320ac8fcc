#!/usr/bin/env bash
# Installs the official A2A JavaScript SDK that crates/sr-cli/tests/a2a.rs runs
# as a client of `sr serve`, pinned by package-lock.json beside this script,
# into $SR_A2A_JS (default: target/a2a-js at the repository root).
# Does nothing when that lock file is already installed there.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"
dest="${SR_A2A_JS:-$root/target/a2a-js}"
exec bash "$root/.ci/npm-locked.sh" "the A2A JavaScript SDK" "$here" "$dest"
