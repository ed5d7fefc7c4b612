//! Fuzzing on the stable toolchain, inside the test suite: every parser of untrusted input is fed
//! mutations of real inputs, for a bounded number of cases, and must never panic, must locate
//! every refusal (file, and for text formats line and column), and must read back what it
//! accepted when that input is written out again.
//!
//! Targets: plans (`plan::parse`), `.baton.yml` (`config::parse`), evidence files
//! (`coverage::parse_evidence`), commit trailers (`coverage::parse_trailers`) and the git index,
//! which git-baton partly decodes by hand (mutated index files of every version that real git
//! wrote, read by the real binary). Seeds are the files under `testdata/fuzz/`.
//!
//! `FUZZ_CASES` sets the number of inputs per target (default 200; `.ci/run` sets more) and
//! `FUZZ_SEED` replays a run: each target prints the seed it used. A failure is shrunk by
//! proptest to the fewest mutations of the simplest seed. See docs/testing.md.

use std::cell::Cell;
use std::path::PathBuf;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

mod config;
mod evidence;
mod index;
mod mutate;
mod plan;
mod regressions;
mod trailers;

/// Inputs per target unless `FUZZ_CASES` says otherwise: enough to catch a regression in a few
/// seconds of `cargo test`.
const DEFAULT_CASES: u32 = 200;

fn cases() -> u32 {
    crate::support::env_number("FUZZ_CASES", DEFAULT_CASES)
}

/// `FUZZ_SEED`, or a fresh one (printed, so that any run can be replayed).
fn seed() -> u64 {
    crate::support::env_seed("FUZZ_SEED")
}

/// The seed files of a target: `testdata/fuzz/<dir>/*`, sorted by name.
fn seeds(dir: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fuzz")
        .join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no seeds in {}", dir.display());
    paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())))
        .collect()
}

/// What a target did with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Accepted, and read back the same when written out again.
    RoundTripped,
    /// Accepted; this format has nothing to write back.
    Accepted,
    /// Refused with a located error.
    Refused,
}

/// Runs `check` on `cases` inputs drawn from `strategy`, and prints how many were accepted and
/// refused, so that a target that only ever exercises one side shows. A check returns `Err` with
/// what is wrong; a panic in it fails the case too.
fn fuzz<T: std::fmt::Debug>(
    target: &str,
    seeds: usize,
    strategy: impl Strategy<Value = T>,
    cases: u32,
    check: impl Fn(&T) -> Result<Verdict, String>,
) {
    let seed = seed();
    let config = Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        // Shrinking reruns the check; bounded, like everything else here.
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let counts = Cell::new([0u32; 3]);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |input| {
        let verdict = check(&input).map_err(TestCaseError::fail)?;
        let mut c = counts.get();
        c[verdict as usize] += 1;
        counts.set(c);
        Ok(())
    });
    let [round_tripped, accepted, refused] = counts.get();
    eprintln!(
        "fuzz {target}: {cases} inputs from {seeds} seeds (FUZZ_SEED={seed}): {} accepted \
         ({round_tripped} round-tripped), {refused} refused with a located error",
        round_tripped + accepted,
    );
    if let Err(err) = result {
        panic!("fuzz {target} (FUZZ_SEED={seed}): {err}");
    }
}

/// [`fuzz`] for a text format: mutations of the seed files of `testdata/fuzz/<dir>`, checked as
/// text (invalid UTF-8 replaced, as a lossy reader would).
fn fuzz_text(target: &str, dir: &str, check: impl Fn(&str) -> Result<Verdict, String>) {
    let seeds = seeds(dir);
    fuzz(
        target,
        seeds.len(),
        mutate::case(mutate::text_mutation(), 6),
        cases(),
        |case| {
            let input = case.apply(&seeds);
            check(&String::from_utf8_lossy(&input))
                .map_err(|why| format!("{why}\ninput ({} bytes): {}", input.len(), shown(&input)))
        },
    );
}

/// An input as Rust would write it in a byte-string literal, cut at 4 KiB, for failure messages
/// and regression tests.
fn shown(input: &[u8]) -> String {
    let cut = &input[..input.len().min(4096)];
    let mut out = String::from("b\"");
    for b in cut {
        out.extend(std::ascii::escape_default(*b).map(char::from));
    }
    out.push('"');
    if cut.len() < input.len() {
        out.push_str(" …");
    }
    out
}

/// What a format counts as a line break, for checking the lines its errors name.
#[derive(Debug, Clone, Copy)]
enum Lines {
    /// `\n` (JSON).
    Lf,
    /// `\r\n`, `\r` or `\n` (YAML 1.2, so also the frontmatter of a plan).
    Yaml,
}

/// Checks that a refusal of `text` (given as `rendered`) names `file`, a line and a column (in
/// characters) that exist in the text, or the position just after a line's end, in the
/// `file:line:column: ` form.
fn located(
    text: &str,
    lines: Lines,
    file: &str,
    (line, column): (u64, u64),
    rendered: &str,
) -> Result<Verdict, String> {
    let prefix = format!("{file}:{line}:{column}: ");
    if !rendered.starts_with(&prefix) {
        return Err(format!(
            "the error does not start with `{prefix}`: {rendered}"
        ));
    }
    let all: Vec<&str> = match lines {
        Lines::Lf => text.split('\n').collect(),
        Lines::Yaml => text
            .split('\n')
            .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
            .collect(),
    };
    let within = usize::try_from(line)
        .ok()
        .and_then(|l| l.checked_sub(1))
        .and_then(|l| all.get(l))
        .is_some_and(|l| column >= 1 && column <= l.chars().count() as u64 + 1);
    if !within {
        return Err(format!(
            "the error points at {line}:{column}, outside the text ({} lines): {rendered}",
            all.len()
        ));
    }
    Ok(Verdict::Refused)
}

/// A YAML double-quoted scalar holding exactly `value`: printable ASCII as is, everything else
/// escaped, so that the writer of a round trip cannot be what fails it.
fn yaml_quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push('"');
    out
}
