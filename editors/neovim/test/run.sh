#!/usr/bin/env bash
# Headless test of the Neovim plugin (works on Neovim 0.7+):
#   SR_BIN=target/debug/sr editors/neovim/test/run.sh
# NVIM names the nvim to test (default: `nvim` on PATH). Compares what
# plugin_test.lua saw with expected.txt and what syntax_test.lua saw with
# syntax_expected.txt, one check per line; on Neovim 0.11+
# also what native_test.lua saw (the native `vim.lsp.enable` configuration)
# with native_expected.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sr=$(realpath "${SR_BIN:?set SR_BIN to the sr binary}")
nvim=${NVIM:-nvim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$("$nvim" --version | head -n 1)"

passed=0 failed=0
# run SCRIPT EXPECTED: one headless session in a fresh copy of the project.
run() {
  rm -rf "$work/project" "$work/report.txt"
  mkdir -p "$work/project/.git"
  cp "$here/main.sr" "$here/other.sr" "$here/lib.sr" "$here/uses.sr" "$here/runs.sr" "$here/try.sr" \
    "$here/try.cassette.jsonl" "$work/project/"
  SR_BIN="$sr" SR_PROJECT="$work/project" SR_REPORT="$work/report.txt" \
    XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache" XDG_CONFIG_HOME="$work/config" \
    timeout 90 "$nvim" --headless --clean --cmd "set rtp^=$(dirname "$here")" -c "luafile $here/$1" \
    </dev/null >"$work/nvim.log" 2>&1 || { cat "$work/nvim.log"; echo "nvim failed"; }
  touch "$work/report.txt"
  while IFS= read -r expected; do
    check=${expected%%=*}
    actual=$(awk -v c="$check=" 'index($0, c) == 1 { print; exit }' "$work/report.txt")
    if [ "$actual" = "$expected" ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "FAIL $check: expected '${expected#*=}', got '${actual#*=}'"
    fi
  done <"$here/$2"
  grep -F 'error=' "$work/report.txt" || true
}

run plugin_test.lua expected.txt
run syntax_test.lua syntax_expected.txt
if "$nvim" --headless --clean -c 'lua io.stdout:write(vim.lsp.enable and "native" or "")' -c 'qall!' 2>/dev/null | grep -q native; then
  run native_test.lua native_expected.txt
else
  echo "(no native vim.lsp.enable before Neovim 0.11: native_test.lua not run)"
fi
echo "neovim plugin: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
