#!/bin/sh
# A CI runner as a worker: fetch a git-baton run from the remote, resume it here, and push what
# it recorded back, so that the run continues wherever it is picked up next. The logic of
# examples/github/baton-worker.yml and examples/gitlab/baton-worker.gitlab-ci.yml (docs/ci.md,
# "CI runners as workers"); tests/remote/worker.rs runs it as a script.
#
#   resume.sh [RUN [STAGE=ACTOR]]
#
# Arguments win over the environment, which is how the CI files pass them:
#
#   BATON_RUN       the run id to resume (required)
#   BATON_ACTOR     STAGE=ACTOR: resume the stage with another configured actor (optional)
#   BATON_REMOTE    the remote the run travels through (default: origin)
#   BATON_GIT_NAME, BATON_GIT_EMAIL
#                   the identity to commit as when git has none (default: git-baton worker
#                   <git-baton-worker@localhost>)
#
# The exit code is `git baton resume`'s: 0 the run reached review (or paused as asked), 1 it
# ended otherwise (the result is pushed all the same), 2 bad input or environment, 3 another
# machine holds the run. After a resume that exited 0, a failed push is the script's failure.
set -eu

say() {
    printf 'baton-worker: %s\n' "$*" >&2
}

fail() {
    printf 'error: %s\n' "$1" >&2
    if [ -n "${2:-}" ]; then
        printf 'hint: %s\n' "$2" >&2
    fi
    exit 2
}

run=${1:-${BATON_RUN:-}}
actor=${2:-${BATON_ACTOR:-}}
remote=${BATON_REMOTE:-origin}

if [ -z "$run" ]; then
    fail "no run to resume: BATON_RUN is empty" \
        "pass the run id (\`git baton list\` shows it on the machine that pushed the run)"
fi
case $actor in
    '' | ?*=?*) ;;
    *) fail "BATON_ACTOR=\`$actor\` is not STAGE=ACTOR" "for example \`executor=codex\`, or empty for the recorded actor" ;;
esac
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    fail "$(pwd) is not a git repository" "check the repository out before this step"
fi
if ! command -v git-baton >/dev/null 2>&1; then
    fail "git-baton is not on PATH" "install it before this step (docs/ci.md)"
fi

# A runner rarely has an identity, and the run's record and snapshots are commits.
if ! git var GIT_AUTHOR_IDENT >/dev/null 2>&1 || ! git var GIT_COMMITTER_IDENT >/dev/null 2>&1; then
    git config user.name "${BATON_GIT_NAME:-git-baton worker}"
    git config user.email "${BATON_GIT_EMAIL:-git-baton-worker@localhost}"
    say "git has no identity here: committing as $(git config user.name) <$(git config user.email)>"
fi

say "fetching runs from $remote"
git baton fetch --remote "$remote"

record=refs/baton/runs/$run/record
before=$(git rev-parse -q --verify "$record" 2>/dev/null || true)

say "resuming run $run${actor:+ with $actor}"
code=0
if [ -n "$actor" ]; then
    git baton resume "$run" --actor "$actor" || code=$?
else
    git baton resume "$run" || code=$?
fi

# Exit 2 (bad input) and 3 (another machine holds the run) record nothing of this runner's,
# unless the record moved all the same; every other ending recorded an attempt or a stage.
# (The record ref is named by the id as given, so a shortened id only ever compares as unchanged.)
after=$(git rev-parse -q --verify "$record" 2>/dev/null || true)
case $code in
    2 | 3)
        if [ -z "$after" ] || [ "$after" = "$before" ]; then
            say "run $run: resume exited $code and recorded nothing here; nothing to push"
            exit "$code"
        fi
        ;;
esac

say "pushing run $run to $remote (resume exited $code)"
pushed=0
git baton push "$run" --remote "$remote" || pushed=$?
if [ "$pushed" -ne 0 ]; then
    printf 'error: run %s: resume exited %s, but pushing its result to %s failed (exit %s)\n' \
        "$run" "$code" "$remote" "$pushed" >&2
    printf 'hint: the result is recorded in this clone only; run `git baton push %s --remote %s` where it can reach %s\n' \
        "$run" "$remote" "$remote" >&2
    if [ "$code" -eq 0 ]; then
        exit "$pushed"
    fi
fi
exit "$code"
