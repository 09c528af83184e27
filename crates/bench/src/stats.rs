//! Medians and human-readable numbers.

/// The median of `values` (the mean of the middle two for an even count; 0
/// for none). NaNs sort last.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// `200000` as `200 000`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A size in bytes: whole GiB or MiB when exact, else MiB with a decimal.
pub fn format_bytes(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", n / GIB)
    } else if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    }
}

/// A rate: bytes as MB/s (10^6 bytes, as link speeds count), anything else as a whole count
/// per second.
pub fn format_rate(rate: f64, unit: &str) -> String {
    if unit == "bytes" {
        format!("{:.1} MB/s", rate / 1e6)
    } else if rate >= 100.0 {
        format!("{} {unit}/s", format_count(rate.round() as u64))
    } else {
        format!("{rate:.2} {unit}/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn numbers() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1000), "1 000");
        assert_eq!(format_count(200_000), "200 000");
        assert_eq!(format_count(1_234_567), "1 234 567");
        assert_eq!(format_bytes(1 << 30), "1 GiB");
        assert_eq!(format_bytes(2 << 20), "2 MiB");
        assert_eq!(format_bytes(1_500_000), "1.4 MiB");
        assert_eq!(format_rate(171_234.4, "rows"), "171 234 rows/s");
        assert_eq!(format_rate(125e6, "bytes"), "125.0 MB/s");
    }
}
