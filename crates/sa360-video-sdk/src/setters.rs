//! Setters named like the fields for the public option structs
//! (`HttpOptions::default().timeout(d)`).
//!
//! The option structs are `#[non_exhaustive]` (a new field is not a breaking
//! change), so outside this crate they cannot be built with a struct literal
//! or `..Default::default()`. Each gets chainable setters instead, written by
//! [`field_setters!`]; the fields stay `pub` for reading and mutation.

/// Writes `setter(self, value) -> Self` methods on an option struct, each
/// listed as `setter => field: T` (the setter is named like its field).
///
/// - `value { x => x: T }`: `self.x = value`;
/// - `into { x => x: T }`: takes `impl Into<T>`;
/// - `some { x => x: T }`: takes a `T` for an `Option<T>` field and sets
///   `Some(value)` (assign the field to clear it);
/// - `list { x => x: T }`: takes any `IntoIterator<Item = T>` for a
///   `Vec<T>` field and replaces its contents.
macro_rules! field_setters {
    (
        $ty:ident {
            $(value { $($vset:ident => $vfield:ident : $vty:ty),* $(,)? })?
            $(into { $($iset:ident => $ifield:ident : $ity:ty),* $(,)? })?
            $(some { $($sset:ident => $sfield:ident : $sty:ty),* $(,)? })?
            $(list { $($lset:ident => $lfield:ident : $lty:ty),* $(,)? })?
        }
    ) => {
        impl $ty {
            $($(
                #[doc = concat!("Sets [`", stringify!($vfield), "`](Self::", stringify!($vfield), ").")]
                #[must_use]
                pub fn $vset(mut self, value: $vty) -> Self {
                    self.$vfield = value;
                    self
                }
            )*)?
            $($(
                #[doc = concat!("Sets [`", stringify!($ifield), "`](Self::", stringify!($ifield), ").")]
                #[must_use]
                pub fn $iset(mut self, value: impl Into<$ity>) -> Self {
                    self.$ifield = value.into();
                    self
                }
            )*)?
            $($(
                #[doc = concat!("Sets [`", stringify!($sfield), "`](Self::", stringify!($sfield), ") to `Some(value)`.")]
                #[must_use]
                pub fn $sset(mut self, value: $sty) -> Self {
                    self.$sfield = Some(value);
                    self
                }
            )*)?
            $($(
                #[doc = concat!("Replaces [`", stringify!($lfield), "`](Self::", stringify!($lfield), ") with `values`.")]
                #[must_use]
                pub fn $lset(mut self, values: impl IntoIterator<Item = $lty>) -> Self {
                    self.$lfield = values.into_iter().collect();
                    self
                }
            )*)?
        }
    };
}

pub(crate) use field_setters;
