#!/usr/bin/env bash
# House format: every tracked C file is as clang-format 16 (Debian bookworm's clang-format-16)
# writes it with the repository's .clang-format. The version is pinned because clang-format's
# output changes between major versions.
# Usage: tests/check-format.sh          list the files that differ, exit 1 if any
#        tests/check-format.sh --fix    rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format-16}
command -v "$cf" >/dev/null || { echo "check-format: $cf is not installed (tests/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h')
if [ "${1:-}" = --fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) differ from $cf's format: ${bad[*]}"
  echo "check-format: run tests/check-format.sh --fix (and commit)"
  exit 1
fi
echo "check-format: ok (${#files[@]} files)"
