//! Small helpers shared by both fakes: deterministic hashing, random tokens and builder setters.

/// The SplitMix64 finalizer: a fast, well-mixed 64-bit hash of one value.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A deterministic hash of a seed and two values.
pub(crate) fn hash3(seed: u64, a: u64, b: u64) -> u64 {
    mix(seed ^ mix(a ^ mix(b).rotate_left(17)))
}

/// Lower-case hex of `n` random-looking bytes drawn from `rng`.
pub(crate) fn hex_token(rng: &mut fastrand::Rng, bytes: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes * 2);
    for _ in 0..bytes {
        let b = rng.u8(..);
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xF)]));
    }
    out
}

/// Builder methods that each set one field: `/// doc` `name(Type) => field.path;` becomes
/// `pub fn name(mut self, value: Type) -> Self`, setting `self.field.path`.
macro_rules! setters {
    ($($(#[$attr:meta])* $name:ident($ty:ty) => $($field:ident).+;)*) => {$(
        $(#[$attr])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.$($field).+ = value;
            self
        }
    )*};
}
pub(crate) use setters;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_is_deterministic_and_spreads() {
        assert_eq!(mix(1), mix(1));
        assert_ne!(mix(1), mix(2));
        assert_ne!(hash3(1, 2, 3), hash3(1, 3, 2));
    }
}
