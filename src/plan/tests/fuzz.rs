//! Mutated plans never make the parser panic.

use super::*;

/// A small xorshift generator: deterministic, and no dependency needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

#[test]
fn never_panics_on_mutated_input() {
    let seeds = [
        "---\nid: a\ntitle: T\ntargets:\n  - src/\n  - \"docs/*.md\"\n  - a.md\nstages: [x, y]\n---\nbody\n",
        "---\ntargets: [a, 'b/**', {c: d}, [e]]\n---\n",
        "\u{feff}---\r\ntargets:\r\n  - ü/\r\n---\r\n",
        "---\nx: &a [*a]\n---\n",
    ];
    let pieces = [
        "---", "\n", "\r\n", "-", " ", ":", "*", "**", "[", "]", "{", "}", "/", "\\", "..", ".git",
        "\"", "'", "#", "&a", "*a", "!!str", "|", ">", "\t", "é", "\u{feff}", "\0", "targets",
        "id", "stages", "title", "~", "?", ",", "<<",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let mut text: Vec<char> = seeds[round % seeds.len()].chars().collect();
        for _ in 0..=rng.below(6) {
            let at = rng.below(text.len() + 1);
            match rng.below(3) {
                0 if at < text.len() => {
                    text.remove(at);
                }
                1 => {
                    let piece = pieces[rng.below(pieces.len())];
                    for (i, c) in piece.chars().enumerate() {
                        text.insert(at + i, c);
                    }
                }
                _ => {
                    let deep = "[".repeat(rng.below(200));
                    for (i, c) in deep.chars().enumerate() {
                        text.insert(at + i, c);
                    }
                }
            }
        }
        let text: String = text.into_iter().collect();
        match parse("p.md", &text) {
            Ok(plan) => {
                for t in &plan.targets {
                    assert!(t.line >= 2 && t.column >= 1, "{text:?}: {t:?}");
                    let _ = t.scope();
                    let _ = t.matches(&t.spec);
                }
            }
            Err(e) => {
                let lines = text.split('\n').count().max(1);
                assert!(e.line >= 1 && e.line <= lines, "{text:?}: {e:?}");
                assert!(e.column >= 1, "{text:?}: {e:?}");
            }
        }
    }
}
