#!/usr/bin/env bash
# Installs the third-party MCP servers that crates/sr-mcp/tests/client.rs
# and crates/sr-runtime/tests/mcp.rs connect to, pinned by package-lock.json beside this script, into
# $SR_MCP_SERVERS (default: target/mcp-servers at the repository root).
# Does nothing when that lock file is already installed there.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
dest="${SR_MCP_SERVERS:-$root/target/mcp-servers}"
exec bash "$root/.ci/npm-locked.sh" "MCP test servers" "$here" "$dest"
