//! Keeping the server's resident memory near what it uses. glibc keeps what
//! a request freed in its arenas, so without a trim after a big answer the
//! server's resident memory stays near that answer's peak for the rest of the
//! session; and with an arena per thread (up to 8 per core), memory one
//! blocking thread freed is not reused by the next request's thread, so each
//! big request on the 9.2 MB benchmark file added 10–50 MiB that stayed.

/// Answers at least this big are followed by a trim.
pub(crate) const TRIM_AFTER: usize = 1 << 20;

/// Diagnostics that took at least this long to compute are followed by a
/// trim: they parsed and lowered enough to leave tens of MiB freed but
/// resident (opening the 9.2 MB benchmark file).
pub(crate) const TRIM_AFTER_ANALYSIS: std::time::Duration = std::time::Duration::from_millis(100);

/// One malloc arena for the whole process. Through stdio on the 9.2 MB benchmark file
/// (`cargo xtask bench lsp`), requests then leave resident memory where it
/// was instead of raising it, at no measured cost in time: the server works
/// on one or two requests at a time, so threads seldom wait for the arena.
/// And allocations of 1 MiB or more always mapped: on the same file the
/// documentSymbol peak went from 446–452 to 433–434 MiB, semantic tokens'
/// from 513–520 to 487–489 MiB, idle from 396 to 385–386 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn one_arena() {
    // SAFETY: `mallopt` takes plain integers and only sets glibc's tunable.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    // A fixed threshold (glibc's own rises up to 32 MiB after each big free):
    // an answer's buffer of 1 MiB or more is then mapped, grows by remapping
    // instead of by a copy next to the old buffer, and goes back to the
    // system when freed.
    // SAFETY: as above.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn one_arena() {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn release() {
    // SAFETY: `malloc_trim` takes no pointer and works on glibc's own heap
    // under its own locks; any thread may call it at any time.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release() {}
