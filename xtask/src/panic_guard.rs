//! Run code that may panic (progenitor does, on unsupported spec shapes) and
//! turn the panic into a message, without printing the default panic report.
//!
//! A process-wide panic hook is installed once. It captures the message only
//! for threads currently inside [`catch_panic`] and defers to the previous
//! hook everywhere else, so panics in other threads (e.g. other tests running
//! in parallel) are still reported normally.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// `Some(slot)` while the current thread is inside [`catch_panic`].
    static CAPTURE: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

static INSTALL_HOOK: Once = Once::new();

fn install_hook() {
    INSTALL_HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let captured = CAPTURE.with(|capture| {
                let mut capture = capture.borrow_mut();
                match capture.as_mut() {
                    Some(slot) => {
                        let message = payload_message(info.payload());
                        *slot = Some(match info.location() {
                            Some(location) => format!(
                                "{message} (at {}:{})",
                                short_path(location.file()),
                                location.line()
                            ),
                            None => message,
                        });
                        true
                    }
                    None => false,
                }
            });
            if !captured {
                previous(info);
            }
        }));
    });
}

/// Keep the last three path components: `progenitor-impl-0.15.1/src/method.rs`.
fn short_path(file: &str) -> String {
    let parts: Vec<&str> = file.split(['/', '\\']).collect();
    parts[parts.len().saturating_sub(3)..].join("/")
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Run `f`; if it panics, return the panic message (with the panicking source
/// location when known) instead of unwinding, and print nothing.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let outer = CAPTURE.with(|capture| capture.borrow_mut().replace(None));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    let captured = CAPTURE.with(|capture| {
        let mut capture = capture.borrow_mut();
        let captured = capture.take().flatten();
        *capture = outer;
        captured
    });
    result.map_err(|payload| captured.unwrap_or_else(|| payload_message(payload.as_ref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_value_when_no_panic() {
        assert_eq!(catch_panic(|| 42), Ok(42));
    }

    #[test]
    fn captures_message_and_location() {
        let err = catch_panic(|| -> () { panic!("boom {}", 7) }).unwrap_err();
        assert!(err.starts_with("boom 7 (at "), "{err}");
        assert!(err.contains("panic_guard.rs"), "{err}");
    }

    #[test]
    fn nested_catch_restores_outer_capture() {
        let outer = catch_panic(|| {
            let inner = catch_panic(|| -> () { panic!("inner") });
            assert!(inner.unwrap_err().starts_with("inner"));
            panic!("outer")
        });
        assert!(outer.unwrap_err().starts_with("outer"));
    }
}
