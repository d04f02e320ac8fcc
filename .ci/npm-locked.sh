#!/usr/bin/env bash
# Installs the npm packages pinned by SOURCE/package-lock.json (with its
# package.json) into DEST with `npm ci`, and does nothing when that lock file
# is installed there already (a copy of it beside them is the stamp).
# Usage: npm-locked.sh WHAT SOURCE DEST
set -euo pipefail

what=$1
here=$2
dest=$3
stamp="$dest/installed-package-lock.json"

if cmp -s "$here/package-lock.json" "$stamp"; then
    echo "$what: installed in $dest"
    exit 0
fi
mkdir -p "$dest"
rm -f "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts)
cp "$here/package-lock.json" "$stamp"
echo "$what: newly installed in $dest"
