//! "Did you mean …?": the one string distance behind every suggestion in error messages.

/// Levenshtein distance that also counts swapping two adjacent characters as one edit
/// (optimal string alignment), because transpositions like `tragets` are the common typo.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
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
    }
}
