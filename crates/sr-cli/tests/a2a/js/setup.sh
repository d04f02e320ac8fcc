#!/usr/bin/env bash
# Installs the official A2A JavaScript SDK that crates/sr-cli/tests/a2a.rs runs
# as a client of `sr serve`, pinned by package-lock.json beside this script,
# into $SR_A2A_JS (default: target/a2a-js at the repository root).
# Does nothing when that lock file is already installed there.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"
dest="${SR_A2A_JS:-$root/target/a2a-js}"
stamp="$dest/installed-package-lock.json"

if cmp -s "$here/package-lock.json" "$stamp"; then
    echo "the A2A JavaScript SDK is installed in $dest"
    exit 0
fi
mkdir -p "$dest"
rm -f "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts)
cp "$here/package-lock.json" "$stamp"
echo "the A2A JavaScript SDK installed in $dest"
