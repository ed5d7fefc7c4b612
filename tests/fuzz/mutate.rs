//! The mutation engine: a fuzz input is a seed (a real input) and a short list of mutations,
//! both drawn by proptest, so that a failure shrinks to the fewest, smallest mutations of the
//! simplest seed that still fail.
//!
//! The mutations are the usual ones of byte-level fuzzers (flip a bit, set a byte, delete,
//! duplicate, truncate, splice in part of another seed) plus the ones that reach parsers of
//! line-oriented text (duplicate, drop or swap a line, change its indentation), of YAML and JSON
//! (insert a token from a dictionary, nest brackets deeply) and of binary formats (overwrite a
//! 16- or 32-bit field with a boundary value).

use proptest::prelude::*;
use proptest::sample::{Index, select};

/// Tokens worth inserting into YAML, JSON, markdown frontmatter and commit messages: the
/// syntax of each, the values their schemas single out, and text that is hard to get right.
pub const TEXT_TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "  ",
    "---\n",
    "--- x\n",
    "...\n",
    "---",
    ":",
    ": ",
    " :",
    "- ",
    "-",
    "?",
    "? ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\U0001F600",
    "\\x85",
    "#",
    " # c",
    "&a ",
    "*a",
    "<<: ",
    "!!str ",
    "!!binary ",
    "!tag ",
    "%YAML 1.2\n",
    "|",
    ">-",
    "~",
    "null",
    "true",
    "yes",
    "no",
    "0",
    "-1",
    "1.10",
    "0x1f",
    "1e999",
    "-0",
    "18446744073709551616",
    "4294967296",
    ".inf",
    ".nan",
    "\u{0}",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{fffd}",
    "é",
    "日本",
    "😀",
    "e\u{301}",
    "\u{202e}",
    "targets",
    "targets: ",
    "id: ",
    "title: ",
    "stages: ",
    "plans_dir: ",
    "worktree_root: ",
    "coverage: ",
    "resume",
    "require_targets: ",
    "actors:\n",
    "pipeline:\n",
    "prompts:\n",
    "command: ",
    "timeout: ",
    "30m",
    "0s",
    "99999999999999999999h",
    "stdin: prompt",
    "env: ",
    "rate_limit: ",
    "exit_codes",
    "patterns",
    "stage: ",
    "actor: ",
    "gate: coverage",
    "{prompt_file}",
    "{nope}",
    "{{",
    "}}",
    "target_coverage",
    "status",
    "changed",
    "unchanged",
    "reason",
    "paths",
    "usage",
    "input_tokens",
    "cost_usd",
    "Baton-Unchanged: ",
    "baton-unchanged:",
    "Baton-Run: ",
    "Signed-off-by: x",
    "docs/a.md",
    "src/",
    "./",
    "../",
    "/",
    "//",
    ".git/",
    "**",
    "*",
    "*.md",
    "[id]",
    "{a,b}",
    "[!a]",
    "a: b",
];

/// Boundary values for binary fields: zero, one, sign bits, all ones, the index's own
/// constants (`DIRC`, versions, flag bits) and sizes near a typical file's.
pub const WORDS: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    0x0fff,
    0x1000,
    0x4000,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x4449_5243,
    0x5452_4545,
    0x6c69_6e6b,
    100,
    1000,
    65_536,
];

#[derive(Debug, Clone)]
pub enum Mutation {
    FlipBit {
        at: Index,
        bit: u8,
    },
    SetByte {
        at: Index,
        byte: u8,
    },
    Delete {
        at: Index,
        len: usize,
    },
    Duplicate {
        from: Index,
        len: usize,
        to: Index,
    },
    Truncate {
        at: Index,
    },
    Insert {
        at: Index,
        token: &'static str,
    },
    /// `depth` copies of `open` (deep nesting is where recursive parsers overflow their stack).
    Nest {
        at: Index,
        open: &'static str,
        depth: usize,
    },
    /// Part of another seed (or of this one), inserted.
    Splice {
        at: Index,
        seed: Index,
        from: Index,
        len: usize,
    },
    DuplicateLine {
        line: Index,
    },
    DeleteLine {
        line: Index,
    },
    SwapLines {
        a: Index,
        b: Index,
    },
    /// Changes the leading whitespace of a line to `indent` spaces or, if odd, a tab.
    Indent {
        line: Index,
        indent: u8,
    },
    /// Overwrites a big-endian field of `width` bytes, at a multiple of `width` if `aligned`.
    SetWord {
        at: Index,
        width: u8,
        aligned: bool,
        value: u32,
    },
}

/// One fuzz input before it is applied: the seed's position in the corpus and the mutations.
#[derive(Debug, Clone)]
pub struct Case {
    pub seed: Index,
    pub mutations: Vec<Mutation>,
}

/// Mutations for text formats.
pub fn text_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), select(TEXT_TOKENS)).prop_map(|(at, token)| Mutation::Insert { at, token }),
        2 => (any::<Index>(), 1..24usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        2 => (any::<Index>(), 1..48usize, any::<Index>())
            .prop_map(|(from, len, to)| Mutation::Duplicate { from, len, to }),
        2 => (any::<Index>(), any::<Index>(), any::<Index>(), 1..64usize)
            .prop_map(|(at, seed, from, len)| Mutation::Splice { at, seed, from, len }),
        2 => any::<Index>().prop_map(|line| Mutation::DuplicateLine { line }),
        2 => any::<Index>().prop_map(|line| Mutation::DeleteLine { line }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        2 => (any::<Index>(), 0..9u8).prop_map(|(line, indent)| Mutation::Indent { line, indent }),
        1 => (any::<Index>(), 0..8u8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Mutation::SetByte { at, byte }),
        1 => any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        1 => (any::<Index>(), select(&["[", "{", "- ", "[{\"a\":", "a:\n "][..]), 1..3000usize)
            .prop_map(|(at, open, depth)| Mutation::Nest { at, open, depth }),
    ]
}

/// Mutations for binary formats.
pub fn binary_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), 0..8u8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Mutation::SetByte { at, byte }),
        3 => (any::<Index>(), select(&[2u8, 4][..]), any::<bool>(), select(WORDS))
            .prop_map(|(at, width, aligned, value)| Mutation::SetWord { at, width, aligned, value }),
        1 => (any::<Index>(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<Index>(), 1..128usize, any::<Index>())
            .prop_map(|(from, len, to)| Mutation::Duplicate { from, len, to }),
        1 => any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        1 => (any::<Index>(), any::<Index>(), any::<Index>(), 1..256usize)
            .prop_map(|(at, seed, from, len)| Mutation::Splice { at, seed, from, len }),
    ]
}

/// A seed and up to `max` mutations drawn from `mutation`.
pub fn case(mutation: impl Strategy<Value = Mutation>, max: usize) -> impl Strategy<Value = Case> {
    (any::<Index>(), proptest::collection::vec(mutation, 0..=max))
        .prop_map(|(seed, mutations)| Case { seed, mutations })
}

impl Case {
    /// The seed this case starts from.
    pub fn seed_index(&self, seeds: usize) -> usize {
        self.seed.index(seeds)
    }

    /// The input: the seed with every mutation applied in order.
    pub fn apply(&self, seeds: &[Vec<u8>]) -> Vec<u8> {
        let mut data = seeds[self.seed_index(seeds.len())].clone();
        for mutation in &self.mutations {
            mutation.apply(&mut data, seeds);
        }
        data
    }
}

impl Mutation {
    fn apply(&self, data: &mut Vec<u8>, seeds: &[Vec<u8>]) {
        // A position in `0..=len`, where insertions may go.
        let pos = |at: &Index, len: usize| at.index(len + 1);
        match self {
            Mutation::FlipBit { at, bit } => {
                if !data.is_empty() {
                    let i = at.index(data.len());
                    data[i] ^= 1 << bit;
                }
            }
            Mutation::SetByte { at, byte } => {
                if !data.is_empty() {
                    let i = at.index(data.len());
                    data[i] = *byte;
                }
            }
            Mutation::Delete { at, len } => {
                let start = pos(at, data.len());
                let end = (start + len).min(data.len());
                data.drain(start..end);
            }
            Mutation::Duplicate { from, len, to } => {
                let start = pos(from, data.len());
                let end = (start + len).min(data.len());
                let part = data[start..end].to_vec();
                let at = pos(to, data.len());
                data.splice(at..at, part);
            }
            Mutation::Truncate { at } => {
                let end = pos(at, data.len());
                data.truncate(end);
            }
            Mutation::Insert { at, token } => {
                let at = pos(at, data.len());
                data.splice(at..at, token.bytes());
            }
            Mutation::Nest { at, open, depth } => {
                let at = pos(at, data.len());
                data.splice(at..at, open.repeat(*depth).into_bytes());
            }
            Mutation::Splice {
                at,
                seed,
                from,
                len,
            } => {
                let other = seed.get(seeds);
                let start = pos(from, other.len());
                let end = (start + len).min(other.len());
                let part = other[start..end].to_vec();
                let at = pos(at, data.len());
                data.splice(at..at, part);
            }
            Mutation::DuplicateLine { line } => {
                let lines = lines(data);
                let (start, end) = lines[line.index(lines.len())];
                let part = data[start..end].to_vec();
                data.splice(end..end, part);
            }
            Mutation::DeleteLine { line } => {
                let lines = lines(data);
                let (start, end) = lines[line.index(lines.len())];
                data.drain(start..end);
            }
            Mutation::SwapLines { a, b } => {
                let lines = lines(data);
                let (first, second) = {
                    let (x, y) = (a.index(lines.len()), b.index(lines.len()));
                    (x.min(y), x.max(y))
                };
                if first != second {
                    let (s1, e1) = lines[first];
                    let (s2, e2) = lines[second];
                    let mut out = data[..s1].to_vec();
                    out.extend_from_slice(&data[s2..e2]);
                    out.extend_from_slice(&data[e1..s2]);
                    out.extend_from_slice(&data[s1..e1]);
                    out.extend_from_slice(&data[e2..]);
                    *data = out;
                }
            }
            Mutation::Indent { line, indent } => {
                let lines = lines(data);
                let (start, end) = lines[line.index(lines.len())];
                let body = data[start..end]
                    .iter()
                    .position(|b| *b != b' ' && *b != b'\t')
                    .map_or(end, |i| start + i);
                let new: Vec<u8> = if indent % 2 == 1 {
                    vec![b'\t']
                } else {
                    vec![b' '; usize::from(*indent)]
                };
                data.splice(start..body, new);
            }
            Mutation::SetWord {
                at,
                width,
                aligned,
                value,
            } => {
                let width = usize::from(*width);
                if data.len() >= width {
                    let slots = data.len() - width + 1;
                    let mut i = at.index(slots);
                    if *aligned {
                        i -= i % width;
                    }
                    let bytes = value.to_be_bytes();
                    data[i..i + width].copy_from_slice(&bytes[4 - width..]);
                }
            }
        }
    }
}

/// `(start, end)` of each line, its line break included; one empty line for empty data.
fn lines(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in data.iter().enumerate() {
        if *b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < data.len() || out.is_empty() {
        out.push((start, data.len()));
    }
    out
}
