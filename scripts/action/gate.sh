#!/usr/bin/env bash
# The GitHub Action's logic (action.yml runs only this): refuse a shallow checkout, install
# git-baton — a prebuilt release archive checked against its .sha256 file, else `cargo install
# --locked` — and run `git baton verify` on the pull request, exiting with the gate's own code
# (0 passed, 1 failed, 2 bad input or environment).
#
# Inputs arrive as environment variables, as GitHub passes them to composite steps through
# action.yml; every one has a default, so the script also runs outside GitHub (tests/action.rs
# runs it against fixture repositories):
#
#   INPUT_PLANS          plan files, separated by whitespace (default: none; the gate discovers)
#   INPUT_BASE           the base revision (default: origin/$GITHUB_BASE_REF)
#   INPUT_HEAD           the head revision (default: HEAD)
#   INPUT_FORMAT         text, json, github, markdown or sarif (default: github)
#   INPUT_SARIF          false (default), true, or a file: also write the gate as a SARIF 2.1.0
#                        log (true: $RUNNER_TEMP/git-baton.sarif, else ./git-baton.sarif), and
#                        name it in the step output `sarif-file` (for upload-sarif)
#   INPUT_REQUIRE_PLANS  true or false (default: false): pass --require-plans
#   INPUT_ARGS           more arguments for `git baton verify`, separated by whitespace
#   INPUT_VERSION        the release to install, `0.2.0` or `v0.2.0` (default: the version in
#                        the Cargo.toml next to this script, i.e. of the action's own ref)
#   INPUT_RELEASE_URL    where release archives are: <url>/v<version>/<archive> (default: the
#                        `repository` of that Cargo.toml, or GITHUB_ACTION_REPOSITORY, on GitHub)
#
# Also read: GIT_BATON_INSTALL_DIR (default: $RUNNER_TEMP/git-baton, else a temporary directory),
# GIT_BATON_TARGET (the target triple to download; default: this machine's), GIT_BATON_CARGO
# (the cargo to fall back to; default: cargo), GITHUB_PATH (the install directory is added).
set -euo pipefail

action_dir=$(cd "$(dirname "$0")/../.." && pwd)

fail() {
    # One `error:` line for the log and an annotation for the run's summary.
    printf 'error: %s\n' "$1" >&2
    [ -n "${2:-}" ] && printf 'hint: %s\n' "$2" >&2
    if [ -n "${GITHUB_ACTIONS:-}" ]; then
        printf '::error title=git-baton action::%s\n' "$1"
    fi
    exit 2
}

info() {
    printf 'git-baton action: %s\n' "$*" >&2
}

# --- the checkout -------------------------------------------------------------------------------

if ! git rev-parse --git-dir >/dev/null 2>&1; then
    fail "$(pwd) is not a git repository" "check the repository out first (actions/checkout)"
fi
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    fail "the checkout is shallow, so the merge base of the pull request is missing; the gate never guesses one" \
        "give actions/checkout \`fetch-depth: 0\` (or run \`git fetch --unshallow\` before this step)"
fi

base=${INPUT_BASE:-}
if [ -z "$base" ]; then
    if [ -z "${GITHUB_BASE_REF:-}" ]; then
        fail "no base revision: the \`base\` input is empty and this is not a pull_request event" \
            "set \`base:\` (for example \`base: origin/main\`)"
    fi
    base="origin/$GITHUB_BASE_REF"
fi
head=${INPUT_HEAD:-HEAD}
format=${INPUT_FORMAT:-github}
case "${INPUT_SARIF:-false}" in
false | '') sarif_file= ;;
true) sarif_file="${RUNNER_TEMP:-.}/git-baton.sarif" ;;
*) sarif_file=$INPUT_SARIF ;;
esac

# --- the binary ---------------------------------------------------------------------------------

source_version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$action_dir/Cargo.toml" | head -n 1)
version=${INPUT_VERSION:-$source_version}
version=${version#v}
if [ -z "$version" ]; then
    fail "no version to install: the \`version\` input is empty and $action_dir/Cargo.toml names none"
fi

release_url=${INPUT_RELEASE_URL:-}
if [ -z "$release_url" ]; then
    repository=$(sed -n 's/^repository *= *"\([^"]*\)".*/\1/p' "$action_dir/Cargo.toml" | head -n 1)
    if [ -n "$repository" ]; then
        release_url="${repository%/}/releases/download"
    elif [ -n "${GITHUB_ACTION_REPOSITORY:-}" ]; then
        release_url="${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_ACTION_REPOSITORY/releases/download"
    fi
fi

target=${GIT_BATON_TARGET:-}
if [ -z "$target" ]; then
    case "$(uname -s)-$(uname -m)" in
    Linux-x86_64 | Linux-amd64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) target=x86_64-apple-darwin ;;
    Darwin-arm64 | Darwin-aarch64) target=aarch64-apple-darwin ;;
    *) target= ;;
    esac
fi

install_dir=${GIT_BATON_INSTALL_DIR:-}
if [ -z "$install_dir" ]; then
    if [ -n "${RUNNER_TEMP:-}" ]; then
        install_dir="$RUNNER_TEMP/git-baton"
    else
        install_dir=$(mktemp -d)
    fi
fi
bin_dir="$install_dir/bin"
mkdir -p "$bin_dir"

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    else
        shasum -a 256 "$1" | cut -d ' ' -f 1
    fi
}

# Downloads the release archive and its checksum file, `<archive>.sha256` as the release workflow
# (taiki-e/upload-rust-binary-action) writes it: sha256sum lines, one per file of the archive. Returns 1 when either cannot be had (no such
# release or platform: the caller falls back to building); exits when the archive does not match
# its checksum or does not hold the binary, which must never be installed.
download() {
    local archive="git-baton-v$version-$target"
    local url="$release_url/v$version/$archive.tar.gz"
    local work="$install_dir/download"
    rm -rf "$work"
    mkdir -p "$work"
    info "downloading $url"
    if ! curl --fail --silent --show-error --location --retry 3 --max-time 300 \
        --output "$work/$archive.tar.gz" "$url"; then
        info "no release archive at $url"
        return 1
    fi
    local sums="$release_url/v$version/$archive.sha256"
    if ! curl --fail --silent --show-error --location --retry 3 --max-time 60 \
        --output "$work/$archive.sha256" "$sums"; then
        info "no checksum file at $sums"
        return 1
    fi
    local expected actual
    # The line of the .tar.gz (`<hash>  <name>`, or `<hash> *<name>` in binary mode).
    expected=$(awk -v name="$archive.tar.gz" '$2 == name || $2 == "*" name { print tolower($1); exit }' \
        "$work/$archive.sha256")
    actual=$(sha256 "$work/$archive.tar.gz")
    if [ -z "$expected" ]; then
        fail "$archive.sha256 has no line for $archive.tar.gz; refusing to install it unchecked"
    fi
    if [ "$expected" != "$actual" ]; then
        fail "$archive.tar.gz does not match its checksum (expected sha256 $expected, got $actual); refusing to install it" \
            "download it again later; if it persists, report it to the project — do not skip the check"
    fi
    tar -xzf "$work/$archive.tar.gz" -C "$work"
    if [ ! -f "$work/$archive/git-baton" ]; then
        fail "$archive.tar.gz holds no $archive/git-baton"
    fi
    cp "$work/$archive/git-baton" "$bin_dir/git-baton"
    chmod +x "$bin_dir/git-baton"
    rm -rf "$work"
    info "installed the release binary v$version for $target"
}

build() {
    local cargo=${GIT_BATON_CARGO:-cargo}
    if ! command -v "$cargo" >/dev/null 2>&1; then
        fail "no prebuilt git-baton v$version for ${target:-this platform}, and no cargo to build it" \
            "install a Rust toolchain before this step (dtolnay/rust-toolchain), or use a release version"
    fi
    if [ "$version" = "$source_version" ]; then
        info "building git-baton v$version from the action's source (cargo install --locked)"
        "$cargo" install --locked --quiet --path "$action_dir" --root "$install_dir"
    else
        info "building git-baton v$version from crates.io (cargo install --locked)"
        "$cargo" install --locked --quiet git-baton --version "=$version" --root "$install_dir"
    fi
    [ -x "$bin_dir/git-baton" ] || fail "cargo install left no $bin_dir/git-baton"
}

if [ -x "$bin_dir/git-baton" ] && "$bin_dir/git-baton" --version 2>/dev/null | grep -qF " $version"; then
    info "git-baton v$version is already installed in $bin_dir"
elif [ -z "$target" ] || [ -z "$release_url" ] || ! download; then
    build
fi
if [ -n "${GITHUB_PATH:-}" ]; then
    printf '%s\n' "$bin_dir" >>"$GITHUB_PATH"
fi

# --- the gate -----------------------------------------------------------------------------------

set -f # plans and arguments are split on whitespace, never globbed
# shellcheck disable=SC2206
plans=(${INPUT_PLANS:-})
# shellcheck disable=SC2206
extra=(${INPUT_ARGS:-})
set +f
args=(verify)
args+=(${plans[@]+"${plans[@]}"})
args+=(--base "$base" --head "$head")
case "${INPUT_REQUIRE_PLANS:-false}" in
true) args+=(--require-plans) ;;
false | '') ;;
*) fail "the \`require-plans\` input must be true or false, not \`$INPUT_REQUIRE_PLANS\`" ;;
esac
args+=(${extra[@]+"${extra[@]}"})
gate_args=("${args[@]}" --format "$format")

info "git baton ${gate_args[*]}"
status=0
"$bin_dir/git-baton" "${gate_args[@]}" || status=$?

# The same gate as SARIF, for code scanning, whatever its verdict: a failed gate is what the
# reviewers should see there. Bad input (exit 2) was already reported by the run above.
if [ -n "$sarif_file" ] && [ "$status" -le 1 ]; then
    sarif_args=("${args[@]}" --format sarif)
    sarif_status=0
    "$bin_dir/git-baton" "${sarif_args[@]}" >"$sarif_file" || sarif_status=$?
    if [ "$sarif_status" -gt 1 ]; then
        fail "git baton verify --format sarif could not write $sarif_file (exit $sarif_status)"
    fi
    info "wrote the SARIF log $sarif_file"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        printf 'sarif-file=%s\n' "$sarif_file" >>"$GITHUB_OUTPUT"
    fi
fi
exit "$status"
