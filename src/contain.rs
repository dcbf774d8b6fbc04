//! Panics inside third-party parsers (lopdf, the image decoders) are contained:
//! the attachment gets a finding and the run goes on. [`contain`] is
//! `catch_unwind` that also keeps the panic quiet: without it, Rust's default
//! hook prints "thread 'main' panicked at …" on stderr for a panic that was
//! caught and turned into a finding, which reads like a crash. A panic
//! anywhere else still reaches the previous hook and is printed as before.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// How many `contain` calls are running on this thread.
    static INSIDE: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Runs `f`; a panic inside it is returned as `Err`, not printed.
pub fn contain<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if INSIDE.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
    INSIDE.with(|n| n.set(n.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|n| n.set(n.get() - 1));
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_contained_panic_is_an_error() {
        let r: std::thread::Result<()> = super::contain(|| panic!("inside a parser"));
        assert!(r.is_err());
        assert_eq!(super::contain(|| 7).ok(), Some(7));
        assert_eq!(super::INSIDE.with(std::cell::Cell::get), 0);
    }
}
