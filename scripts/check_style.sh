#!/usr/bin/env bash
# Mechanical style checks (STYLE.md 18; DDC .clang-tidy, ArborX scripts/check_format_cpp.sh):
#   1. clang-format: every tracked C++ file formatted by .clang-format, with Debian 12's
#      clang-format 14 (pinned: other versions format some constructs differently);
#   2. clang-tidy (.clang-tidy) on mantissa's own translation units, from the build's
#      compile_commands.json, warnings treated as errors.
# Usage: scripts/check_style.sh [BUILD_DIR]     (default build/)
#        scripts/check_style.sh --fix           (reformat in place, no tidy)
# MANTISSA_TIDY=0 skips clang-tidy; MANTISSA_TIDY_FILTER=regex limits the units it checks.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

want_major=14
fmt="$(command -v clang-format-$want_major || command -v clang-format || true)"
if [ -z "$fmt" ]; then
  echo "check_style: clang-format $want_major not found; install Debian's clang-format" >&2
  exit 1
fi
major="$("$fmt" --version | sed -E 's/.*version ([0-9]+).*/\1/')"
if [ "$major" != "$want_major" ]; then
  echo "check_style: $fmt is version $major; the project's format is pinned to clang-format $want_major (Debian 12)" >&2
  exit 1
fi

mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cc' | grep -v '^shared/')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  echo "check_style: formatted ${#files[@]} files"
  exit 0
fi

status=0
bad="$("$fmt" --dry-run "${files[@]}" 2>&1 | grep -E '^[^ ].*: (warning|error):' | cut -d: -f1 | sort -u || true)"
if [ -n "$bad" ]; then
  echo "check_style: not formatted by .clang-format (run scripts/check_style.sh --fix):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  status=1
else
  echo "check_style: clang-format: ${#files[@]} files formatted"
fi

if [ "${MANTISSA_TIDY:-1}" != "0" ]; then
  build="${1:-$here/build}"
  db="$build/compile_commands.json"
  tidy="$(command -v clang-tidy-$want_major || command -v clang-tidy || true)"
  if [ -z "$tidy" ]; then
    echo "check_style: clang-tidy not found; install Debian's clang-tidy" >&2
    exit 1
  fi
  if [ ! -f "$db" ]; then
    echo "check_style: $db missing; configure with scripts/configure.sh (it exports compile commands)" >&2
    exit 1
  fi
  # mantissa's own units only (not fetched or generated code); one unit per library source.
  mapfile -t units < <(/usr/bin/python3 - "$db" "$here" "${MANTISSA_TIDY_FILTER:-}" <<'EOF'
import json, re, sys
db, root, filt = sys.argv[1], sys.argv[2], sys.argv[3]
seen = set()
for e in json.load(open(db)):
    f = e["file"]
    if not f.startswith(root + "/") or "/build" in f[len(root):]:
        continue
    rel = f[len(root) + 1:]
    if not re.match(r"(lib|apps|surrogates)/", rel):
        continue
    if filt and not re.search(filt, rel):
        continue
    if f not in seen:
        seen.add(f)
        print(f)
EOF
  )
  # -Wno-c99-extensions: clang's own F16C intrinsic macros (_cvtss_sh) expand to compound
  # literals; -Wno-unknown-warning-option: gcc-only warning flags in the compile commands.
  log="$(mktemp)"
  printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet \
      --warnings-as-errors='*' --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-c99-extensions \
      --extra-arg=-Wno-unused-command-line-argument >"$log" 2>&1 || status=1
  if [ "$status" != 0 ] && grep -qE '(warning|error):' "$log"; then
    grep -E '(warning|error):' "$log" | sort -u >&2
  fi
  rm -f "$log"
  [ "$status" = 0 ] && echo "check_style: clang-tidy: ${#units[@]} units clean"
fi
exit "$status"
