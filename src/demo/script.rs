//! The demo's world: the documents, the plan, the configuration and the demo actors' scripts.

use super::PLAN;

pub(super) const OVERVIEW: &str = "\
# CDFD overview

A CDFD change is described by three documents: this overview, the check
(docs/cdfd-check.md) and the action (docs/cdfd-action.md).

## 1. Grading

Every document is graded A, B or C by one reviewer.
";

pub(super) const CHECK: &str = "\
# CDFD check

## 1. What is checked

Each change is checked against its acceptance criteria.

## 2. Grading

The check is graded A, B or C by one reviewer.
";

pub(super) const ACTION: &str = "\
# CDFD action

## 1. Scope

The action lists the follow-up work of a change.

## 2. Owners

Every follow-up has one owner.

## 3. Grading

The action is graded A, B or C and every grade is confirmed by two reviewers.
";

pub(super) const PLAN_TEXT: &str = "\
---
id: cdfd-grade-review
title: Grade review of the CDFD documents
targets:
  - docs/cdfd-overview.md
  - docs/cdfd-check.md
  - docs/cdfd-action.md
---
# Apply the new grading rule to the three CDFD documents

The new grading rule: every grade is confirmed by two reviewers. Update each document that
still says a grade is given by one reviewer.
";

pub(super) const CONFIG: &str = "\
# Written by `git baton demo`. The actors below are DEMO ACTORS: short sh scripts in
# demo-actors/ that play the agents of the incident. They are not real agents; a real
# configuration names agent CLIs here (see the README).
actors:
  partial:
    command: [sh, demo-actors/partial.sh]
    rate_limit: { exit_codes: [75] }
  lazy:
    command: [sh, demo-actors/lazy.sh]
  diligent:
    command: [sh, demo-actors/diligent.sh]
  writer:
    command: [sh, demo-actors/writer.sh]
pipeline:
  - { stage: executor, actor: partial, gate: coverage }
  - { stage: reporter, actor: writer }
";

pub(super) const PARTIAL: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the first agent of the incident: it applies the new grading rule to one document of
# three, then hits its provider's rate limit and exits 75 (.baton.yml declares exit code 75 a
# rate limit). Everything goes to stderr, the way agent CLIs report progress.
set -eu
echo "partial: applying the new grading rule to docs/cdfd-overview.md" >&2
sed 's/by one reviewer\./and every grade is confirmed by two reviewers./' \
  docs/cdfd-overview.md > docs/cdfd-overview.md.new
mv docs/cdfd-overview.md.new docs/cdfd-overview.md
echo "partial: error: rate limit reached for this account; try again in 5 hours" >&2
exit 75
"##;

pub(super) const LAZY: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the resumed agent of the incident: it has none of its predecessor's context, sees a
# worktree where a document was already edited, concludes the work is done, changes nothing
# and exits 0.
set -eu
echo "lazy: reading the plan and the worktree"
echo "lazy: docs/cdfd-overview.md already has the new grading rule"
echo "lazy: the work looks done"
exit 0
"##;

pub(super) const DILIGENT: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays a careful agent resuming someone else's work: it re-checks every target, applies the
# new grading rule to docs/cdfd-check.md, and writes an evidence file ($BATON_EVIDENCE_FILE)
# saying why docs/cdfd-action.md needs no change, with made-up usage figures.
set -eu
echo "diligent: re-checking every target of the plan"
echo "diligent: docs/cdfd-overview.md already has the new grading rule"
sed 's/by one reviewer\./and every grade is confirmed by two reviewers./' \
  docs/cdfd-check.md > docs/cdfd-check.md.new
mv docs/cdfd-check.md.new docs/cdfd-check.md
echo "diligent: docs/cdfd-check.md: applied the new grading rule"
echo "diligent: docs/cdfd-action.md: no change needed, recording why in the evidence file"
cat > "$BATON_EVIDENCE_FILE" <<'EOF'
{
  "target_coverage": [
    {"target": "docs/cdfd-action.md", "status": "unchanged",
     "reason": "already states the new grading rule in section 3"}
  ],
  "usage": {"input_tokens": 12000, "output_tokens": 3400, "cost_usd": 0.41,
            "model": "demo", "provider": "demo"}
}
EOF
exit 0
"##;

pub(super) const WRITER: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the reporter: writes a short report of the run to reports/cdfd-grade-review.md (not a
# target of the plan), from the coverage section of its prompt ($BATON_PROMPT_FILE).
set -eu
mkdir -p reports
{
  echo "# Report: grade review of the CDFD documents"
  echo
  echo "Coverage of the work, as git-baton gave it to the reporter:"
  sed -n '/^## Coverage of the work so far/,/^## /{/^## /!p;}' "$BATON_PROMPT_FILE"
} > reports/cdfd-grade-review.md
echo "writer: wrote reports/cdfd-grade-review.md"
exit 0
"##;

/// The files of the demo repository, all committed as its base commit.
pub(super) const FILES: &[(&str, &str)] = &[
    ("docs/cdfd-overview.md", OVERVIEW),
    ("docs/cdfd-check.md", CHECK),
    ("docs/cdfd-action.md", ACTION),
    (PLAN, PLAN_TEXT),
    (".baton.yml", CONFIG),
    ("demo-actors/partial.sh", PARTIAL),
    ("demo-actors/lazy.sh", LAZY),
    ("demo-actors/diligent.sh", DILIGENT),
    ("demo-actors/writer.sh", WRITER),
];
