#!/usr/bin/env bash
# Installs the third-party MCP servers that crates/sr-mcp/tests/client.rs
# and crates/sr-runtime/tests/mcp.rs connect to, pinned by package-lock.json beside this script, into
# $SR_MCP_SERVERS (default: target/mcp-servers at the repository root).
# Does nothing when that lock file is already installed there.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
dest="${SR_MCP_SERVERS:-$root/target/mcp-servers}"
stamp="$dest/installed-package-lock.json"

if cmp -s "$here/package-lock.json" "$stamp"; then
    echo "MCP test servers are installed in $dest"
    exit 0
fi
mkdir -p "$dest"
rm -f "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts)
cp "$here/package-lock.json" "$stamp"
echo "MCP test servers installed in $dest"
