//! "Did you mean …?": the one string distance behind every suggestion in error messages.

/// Levenshtein distance that also counts swapping two adjacent characters as one edit
/// (optimal string alignment), because transpositions like `tragets` are the common typo.
/// Counted in characters, not bytes, so `cödé` is as far from `code` as it looks.
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("targets", "targets"), 0);
        assert_eq!(edit_distance("tragets", "targets"), 1);
        assert_eq!(edit_distance("taget", "targets"), 2);
        assert_eq!(edit_distance("", "id"), 2);
        assert_eq!(edit_distance("cödé", "code"), 2);
        // Optimal string alignment, not unrestricted Damerau-Levenshtein: a transposed pair is
        // not edited again, so `ca` → `abc` costs 3, not 2.
        assert_eq!(edit_distance("ca", "abc"), 3);
    }
}
