#!/bin/sh
# The quick tour from the README: builds git-baton, makes a throw-away repository with three
# documents and a plan that targets them, edits one document, and runs the coverage gate twice —
# first it fails and names the two untouched targets, then a commit trailer gives a reason for one
# and an edit covers the other, and it passes. Leaves nothing behind.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
baton() { cargo run --quiet --manifest-path "$here/Cargo.toml" -- "$@"; }
baton --version >/dev/null   # build it before the narration starts

repo=$(mktemp -d "${TMPDIR:-/tmp}/baton-tour.XXXXXX")
trap 'rm -rf "$repo"' EXIT
cd "$repo"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=tour GIT_AUTHOR_EMAIL=tour@example.com
export GIT_COMMITTER_NAME=tour GIT_COMMITTER_EMAIL=tour@example.com
git init -q -b main
mkdir docs plans
for doc in overview check action; do printf '# CDFD %s\n' "$doc" > "docs/cdfd-$doc.md"; done
cat > plans/grade-review.md <<'PLAN'
---
title: Grade review of the CDFD documents
targets:
  - docs/cdfd-overview.md
  - docs/cdfd-check.md
  - docs/cdfd-action.md
---
Apply the new grading rule to the three CDFD documents.
PLAN
git add -A && git commit -q -m "plan: grade review"
git switch -q -c grade-review

echo "\$ # an agent edits one document of three, then stops"
echo "New grading rule." >> docs/cdfd-overview.md
echo "\$ git baton verify plans/grade-review.md --base main"
status=0; baton verify plans/grade-review.md --base main || status=$?
echo "(exit $status)"
[ "$status" -eq 1 ] || { echo "tour: expected the gate to fail" >&2; exit 1; }

echo
echo "\$ # the work is finished: one more edit, and a recorded reason for the third document"
echo "New grading rule." >> docs/cdfd-check.md
git commit -q -a -m "Apply the new grading rule" \
  -m "Baton-Unchanged: docs/cdfd-action.md: already states the new grading rule in section 3"
echo "\$ git baton verify plans/grade-review.md --base main"
baton verify plans/grade-review.md --base main
echo "(exit 0)"
