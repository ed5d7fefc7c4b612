use super::*;

#[test]
fn selection_keeps_what_the_scoped_diff_consults() {
    let prefixes = ["a/b/c".to_string(), "d".to_string()];
    let selection = Selection::new(&prefixes);
    let paths: &[&str] = &[
        ".gitignore",
        "a/0",
        "a/b",
        "a/b/a",
        "a/b/c",
        "a/b/c.txt",
        "a/b/c/x",
        "a/b/c/y",
        "a/b/d",
        "b/.gitattributes",
        "c",
        "d",
        "d.txt",
        "d/e/f",
        "e",
    ];
    let mut at = Cursors::default();
    let kept: Vec<&str> = paths
        .iter()
        .copied()
        .filter(|p| selection.keeps(&mut at, p.as_bytes()))
        .collect();
    assert_eq!(
        kept,
        [
            ".gitignore",
            "a/0",
            "a/b",
            "a/b/a",
            "a/b/c",
            "a/b/c/x",
            "a/b/c/y",
            "b/.gitattributes",
            "d",
            "d/e/f",
        ]
    );
}

/// A prefix of 100,000 components: its ancestors are slices of it (no copy each), and only
/// those short enough to be or hold an entry are kept, which are still found.
#[test]
fn a_deep_prefix_costs_its_length() {
    let prefixes = [format!("{}x", "a/".repeat(100_000))];
    let selection = Selection::new(&prefixes);
    assert!(
        selection.exact.len() <= MAX_PATH / 2 + 1,
        "{}",
        selection.exact.len()
    );
    assert!(selection.first_below.len() <= MAX_PATH / 2);
    let mut at = Cursors::default();
    let kept: Vec<&str> = ["a/a", "a/a/a/b", "b"]
        .into_iter()
        .filter(|p| selection.keeps(&mut at, p.as_bytes()))
        .collect();
    assert_eq!(kept, ["a/a", "a/a/a/b"]);
}

#[test]
fn compare_and_has_nul_agree_with_the_slice_methods() {
    let words: Vec<Vec<u8>> = [
        &b""[..],
        b"a",
        b"abcdefgh",
        b"abcdefghi",
        b"abcdefgh\0",
        b"abcdefgg",
        b"d0/e0/f0/file007.txt",
        b"d0/e0/f0/file007.txu",
        b"d0/e0/f0/file007",
        b"d0/e0/f0/file0070",
        b"\xff\xfe",
        b"\0",
        b"x\0yyyyyyyyyyyyyy",
    ]
    .iter()
    .map(|w| w.to_vec())
    .collect();
    for a in &words {
        assert_eq!(has_nul(a), a.contains(&0), "{a:?}");
        for b in &words {
            assert_eq!(compare(a, b), a.cmp(b), "{a:?} {b:?}");
        }
    }
}

#[test]
fn varint_matches_gix() {
    for value in [0u64, 1, 127, 128, 300, 16_511, 16_512, 1 << 40] {
        // Encode as git does (offset encoding), then decode with both.
        let mut bytes = vec![(value & 0x7f) as u8];
        let mut v = value >> 7;
        while v > 0 {
            v -= 1;
            bytes.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        bytes.reverse();
        let ours = varint(&bytes).expect("decodes");
        let theirs = gix::utils::decode::leb64_from_read(bytes.as_slice()).expect("decodes");
        assert_eq!(ours, (theirs.0, theirs.1));
        assert_eq!(ours.0, value);
    }
}
