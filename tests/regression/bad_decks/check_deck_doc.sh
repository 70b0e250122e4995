#!/usr/bin/env bash
# Fails when docs/deck.md differs from what `mantissa deck-doc` prints now.
# usage: check_deck_doc.sh MANTISSA DOCS_DECK_MD
set -uo pipefail
exe="$1" doc="$2"
now="$("$exe" deck-doc 2>/dev/null)" || { echo "FAIL: mantissa deck-doc failed"; exit 1; }
if ! diff -u "$doc" <(printf '%s\n' "$now"); then
  echo "docs/deck.md is stale: run \`build/apps/mantissa/mantissa deck-doc > docs/deck.md\`"
  exit 1
fi
echo "PASS: docs/deck.md matches mantissa deck-doc"
