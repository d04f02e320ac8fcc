//! Giving freed memory back to the system after a big answer. glibc keeps what
//! a request freed in its arenas, so without this the server's resident
//! memory stays near the peak of its biggest answer for the rest of the
//! session.

/// Answers at least this big are followed by a trim.
pub(crate) const TRIM_AFTER: usize = 1 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn release() {
    // SAFETY: `malloc_trim` takes no pointer and works on glibc's own heap
    // under its own locks; any thread may call it at any time.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release() {}
