#!/bin/sh
# A scheduled cycle: resume every git-baton run that is due — queued, crashed, stopped by the
# cycle that drove it, or rate limited past its reset — on this machine, taking them from the
# remote, and leave each result on the remote. The logic of examples/github/baton-cycle.yml,
# examples/gitlab/baton-cycle.gitlab-ci.yml and examples/systemd/git-baton-cycle.service
# (docs/ci.md, "Scheduled cycles"); tests/remote/cycle.rs runs it as a script, on several clones
# of one remote at once.
#
#   cycle.sh
#
# It runs `git baton cycle --once --remote "$BATON_REMOTE"`: one pass, which fetches the remote,
# resumes each due run there or here through `git baton resume` — which takes the run's lease
# through the remote's compare-and-swap, so that a run another runner drives is left to it — and
# publishes each run it drove when it lets go of it. Then it pushes any run whose record here is
# still ahead of the remote's (a publication that failed at the end of a run), so that a result
# does not stay on a runner that is thrown away; one that another driver has right now is left
# to that driver.
#
# Its variables, all optional:
#
#   BATON_REMOTE        the remote the runs travel through (default: origin)
#   BATON_JOBS          runs driven at once (default: 1)
#   BATON_MAX_RESUMES   resumes by cycle without a stage succeeding, after which a run waits for
#                       a person (default: cycle's, 3)
#   BATON_FOR           start no run after this long (`50m`, `5h`): keep it under the job's
#                       timeout, since the runs started before are driven to their end
#   BATON_GIT_NAME, BATON_GIT_EMAIL
#                       the identity to commit as when git has none (default: git-baton worker
#                       <git-baton-worker@localhost>)
#
# Exit codes: 0 the pass ran (a run that ended failed or blocked is recorded as such, on the
# remote, and waits for a person; `git baton list` shows it), 1 a result could not be pushed to
# the remote (the `error:` line names the run) or the cycle failed, 2 bad input or environment,
# 130 stopped by SIGINT or SIGTERM — sent to this script, it is passed on to the cycle, which
# stops its runs at a safe point (the next cycle resumes them), and what was recorded is pushed.
set -eu

say() {
    printf 'baton-cycle: %s\n' "$*" >&2
}

fail() {
    printf 'error: %s\n' "$1" >&2
    if [ -n "${2:-}" ]; then
        printf 'hint: %s\n' "$2" >&2
    fi
    exit 2
}

remote=${BATON_REMOTE:-origin}
jobs=${BATON_JOBS:-1}
max_resumes=${BATON_MAX_RESUMES:-}
for_=${BATON_FOR:-}

case $jobs in
    '' | *[!0-9]* | 0*) fail "BATON_JOBS=\`$jobs\` is not a number of runs above 0" "for example \`2\`, or unset for 1" ;;
esac
case $max_resumes in
    *[!0-9]*) fail "BATON_MAX_RESUMES=\`$max_resumes\` is not a number" "for example \`3\`, or unset for cycle's default" ;;
esac
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    fail "$(pwd) is not a git repository" "check the repository out before this step"
fi
if ! command -v git-baton >/dev/null 2>&1; then
    fail "git-baton is not on PATH" "install it before this step (docs/ci.md)"
fi
if ! git remote get-url "$remote" >/dev/null 2>&1; then
    fail "this clone has no remote \`$remote\`" "set BATON_REMOTE to one of: $(echo $(git remote))"
fi

# A runner rarely has an identity, and the run's record and snapshots are commits.
if ! git var GIT_AUTHOR_IDENT >/dev/null 2>&1 || ! git var GIT_COMMITTER_IDENT >/dev/null 2>&1; then
    git config user.name "${BATON_GIT_NAME:-git-baton worker}"
    git config user.email "${BATON_GIT_EMAIL:-git-baton-worker@localhost}"
    say "git has no identity here: committing as $(git config user.name) <$(git config user.email)>"
fi

set -- cycle --once --remote "$remote" --jobs "$jobs"
if [ -n "$max_resumes" ]; then
    set -- "$@" --max-resumes "$max_resumes"
fi
if [ -n "$for_" ]; then
    set -- "$@" --for "$for_"
fi

say "cycling the runs of $remote ($jobs at once)"
# In the background, so that a SIGTERM sent to this script alone (systemd's KillMode=mixed, a CI
# cancel) reaches the cycle, which then stops its runs at a safe point, and is waited for: the
# shell would otherwise die at once and leave the cycle to be killed with no chance to do so.
# `git-baton` itself, not `git baton`: git would pass the signal on too, but then die of it, and
# the script would exit 143 where the cycle said 130.
git-baton "$@" &
cycle=$!
trap 'kill -TERM "$cycle" 2>/dev/null || true' TERM INT HUP
code=0
wait "$cycle" || code=$?
# A trapped signal ends `wait` early; the cycle is still stopping its runs.
while kill -0 "$cycle" 2>/dev/null; do
    code=0
    wait "$cycle" || code=$?
done
trap - TERM INT HUP
if [ "$code" -eq 2 ]; then
    exit 2
fi

# Each run a resume drove was published when it was let go of; one whose publication failed
# (the remote was out of reach just then) is ahead of the remote here, and is pushed again.
pushed=0
for record in $(git for-each-ref --format='%(refname)' 'refs/baton/runs/*/record'); do
    run=${record#refs/baton/runs/}
    run=${run%/record}
    ours=$(git rev-parse -q --verify "$record" 2>/dev/null || true)
    theirs=$(git rev-parse -q --verify "refs/baton/remotes/$remote/runs/$run/record" 2>/dev/null || true)
    # Not published there (a run of this clone alone), or in step with it: nothing to do.
    if [ -z "$theirs" ] || [ "$ours" = "$theirs" ]; then
        continue
    fi
    if ! git merge-base --is-ancestor "$theirs" "$ours" 2>/dev/null; then
        continue
    fi
    say "run $run is ahead of $remote here: pushing it"
    status=0
    said=$(git baton push "$run" --remote "$remote" 2>&1) || status=$?
    if [ "$status" -eq 3 ]; then
        # Driven right now (here, by a person's resume, say) or taken by another machine
        # since: its driver publishes it, not this script, and that is no error of the pass.
        why=$(printf '%s\n' "$said" | sed -n 's/^error: //p' | head -n 1)
        say "run $run has another driver now (push exited 3): left to it${why:+ ($why)}"
        continue
    fi
    if [ -n "$said" ]; then
        printf '%s\n' "$said" >&2
    fi
    if [ "$status" -ne 0 ]; then
        printf 'error: run %s: its result is recorded in this clone only: pushing it to %s failed\n' \
            "$run" "$remote" >&2
        printf 'hint: run `git baton push %s --remote %s` where it can reach %s\n' \
            "$run" "$remote" "$remote" >&2
        pushed=1
    fi
done

if [ "$code" -ne 0 ]; then
    exit "$code"
fi
exit "$pushed"
