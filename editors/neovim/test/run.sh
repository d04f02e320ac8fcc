#!/usr/bin/env bash
# Headless test of the Neovim plugin (works on Neovim 0.7+):
#   SR_BIN=target/debug/sr editors/neovim/test/run.sh
# Compares what plugin_test.lua saw with expected.txt, one check per line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sr=$(realpath "${SR_BIN:?set SR_BIN to the sr binary}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project/.git"
cp "$here/main.sr" "$here/other.sr" "$here/lib.sr" "$here/uses.sr" "$work/project/"

SR_BIN="$sr" SR_PROJECT="$work/project" SR_REPORT="$work/report.txt" \
  XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache" XDG_CONFIG_HOME="$work/config" \
  timeout 90 nvim --headless --clean --cmd "set rtp^=$(dirname "$here")" -c "luafile $here/plugin_test.lua" \
  </dev/null >"$work/nvim.log" 2>&1 || { cat "$work/nvim.log"; echo "nvim failed"; }

touch "$work/report.txt"
passed=0 failed=0
while IFS= read -r expected; do
  check=${expected%%=*}
  actual=$(awk -v c="$check=" 'index($0, c) == 1 { print; exit }' "$work/report.txt")
  if [ "$actual" = "$expected" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $check: expected '${expected#*=}', got '${actual#*=}'"
  fi
done <"$here/expected.txt"
grep -F 'error=' "$work/report.txt" || true
echo "neovim plugin: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
