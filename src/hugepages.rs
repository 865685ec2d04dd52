//! A global allocator that asks Linux for 2 MiB pages under large buffers,
//! and keeps a few freed large buffers for the next of the same size.
//!
//! A tensor of 4 MiB or more (a 724×724 matrix of f64) is allocated by the
//! system allocator as a fresh mapping of the kernel's, and each of its
//! 4 KiB pages costs a page fault the first time it is written: a 2048×2048
//! gradient is 8192 faults, a third of the backward pass of `sum` or
//! `mean` at that size. [`HugePages`] is the system allocator that, for
//! such a buffer, also advises the kernel to back its whole 2 MiB-aligned
//! interior with transparent huge pages (`madvise(MADV_HUGEPAGE)`), 16
//! faults instead of 8192, as numpy does for its arrays of 4 MiB and more
//! (`numpy/_core/src/multiarray/alloc.c`). The advice changes no byte of
//! the memory; where the kernel has no huge pages to give, or refuses the
//! advice, it is ignored.
//!
//! Huge pages or not, a fresh mapping is memory the kernel zeroes when it
//! is first written, and glibc maps afresh every buffer of 32 MiB or more
//! (its `malloc` keeps smaller freed buffers in its heap once one has been
//! freed, but not these): a 2048×2048 `tanh` and its gradient spent a third
//! of their time in the kernel's `clear_page_erms`. So a freed buffer of
//! [`LARGE`] bytes or more is kept (up to [`SPARES`] of them, [`SPARE_BYTES`]
//! in all) and handed to the next allocation of exactly its size and
//! alignment, as it is (its old bytes; zeroed for `alloc_zeroed`). An
//! allocation of [`LARGE`] bytes or more that finds no buffer of its size
//! first gives every kept buffer back to the system, so the process never
//! holds a kept buffer beside a newly mapped one: with only large buffers
//! coming and going, its peak memory is what it would be without them (the
//! small allocations made while buffers are kept may add up to
//! [`SPARE_BYTES`] at most).
//!
//! The binary and the benchmarks install it:
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: gradcalc::hugepages::HugePages = gradcalc::hugepages::HugePages;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::{Mutex, MutexGuard};

/// Buffers of at least this many bytes get the advice.
pub const LARGE: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and aarch64 (2 MiB).
const HUGE_PAGE: usize = 2 << 20;

/// The most freed large buffers kept for reuse.
pub const SPARES: usize = 8;

/// The most bytes of freed large buffers kept for reuse (256 MiB: eight
/// 2048×2048 matrices of f64).
pub const SPARE_BYTES: usize = 256 << 20;

/// The system allocator, with `madvise(MADV_HUGEPAGE)` on every allocation
/// of [`LARGE`] bytes or more, which also keeps a few such buffers when
/// they are freed, for the next allocation of the same size (see the module).
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

/// A freed buffer of the system allocator's, kept: its address and layout.
#[derive(Debug, Clone, Copy)]
struct Spare {
    at: usize,
    size: usize,
    align: usize,
}

/// The buffers kept ([`SPARES`] slots).
static KEPT: Mutex<[Option<Spare>; SPARES]> = Mutex::new([None; SPARES]);

/// The kept buffers, locked (a panic never happens while they are locked,
/// but a poisoned lock would still hold valid slots).
fn kept() -> MutexGuard<'static, [Option<Spare>; SPARES]> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A kept buffer of exactly `layout`, taken out of the slots; or, when
/// there is none, every kept buffer given back to the system and `None`.
fn take_or_release(layout: Layout) -> Option<*mut u8> {
    let mut slots = kept();
    let found = slots
        .iter_mut()
        .find(|slot| slot.is_some_and(|s| s.size == layout.size() && s.align == layout.align()));
    if let Some(slot) = found {
        return slot.take().map(|s| s.at as *mut u8);
    }
    release(&mut slots);
    None
}

/// Gives every kept buffer back to the system.
fn release(slots: &mut [Option<Spare>; SPARES]) {
    for spare in slots.iter_mut().filter_map(Option::take) {
        // SAFETY: a kept buffer was allocated by `System` with this layout
        // (size and alignment valid, as they were when it was made), and
        // nothing else holds it: it left its owner through `dealloc`.
        unsafe {
            System.dealloc(
                spare.at as *mut u8,
                Layout::from_size_align_unchecked(spare.size, spare.align),
            );
        }
    }
}

/// Keeps the freed buffer `ptr` of `layout` if a slot is free and the kept
/// bytes stay within [`SPARE_BYTES`]; false when it is not kept.
fn keep(ptr: *mut u8, layout: Layout) -> bool {
    let mut slots = kept();
    let held: usize = slots.iter().flatten().map(|s| s.size).sum();
    if held + layout.size() > SPARE_BYTES {
        return false;
    }
    match slots.iter_mut().find(|slot| slot.is_none()) {
        Some(slot) => {
            *slot = Some(Spare {
                at: ptr as usize,
                size: layout.size(),
                align: layout.align(),
            });
            true
        }
        None => false,
    }
}

/// Advises the kernel to back the 2 MiB pages wholly inside `len` bytes
/// from `ptr` with huge pages; an error (no such advice in this kernel)
/// is ignored, as the advice is only about speed.
fn advise(ptr: *mut u8, len: usize) {
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies within the allocation just made, which
        // the caller owns; the advice changes no byte of it.
        let _ = unsafe {
            rustix::mm::madvise(
                start as *mut std::ffi::c_void,
                end - start,
                rustix::mm::Advice::LinuxHugepage,
            )
        };
    }
}

// SAFETY: every method is the system allocator's, with an advice on the
// memory it returned, which keeps its contents and its layout; a kept
// buffer is one the system allocator made with the very layout asked for,
// which its owner freed, handed to one new owner.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() < LARGE {
            // SAFETY: the caller's promises, passed on.
            return unsafe { System.alloc(layout) };
        }
        if let Some(ptr) = take_or_release(layout) {
            return ptr;
        }
        // SAFETY: the caller's promises, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < LARGE {
            // SAFETY: the caller's promises, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        if let Some(ptr) = take_or_release(layout) {
            // SAFETY: the kept buffer holds `layout.size()` bytes.
            unsafe { ptr.write_bytes(0, layout.size()) };
            return ptr;
        }
        // SAFETY: the caller's promises, passed on.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE && keep(ptr, layout) {
            return;
        }
        // SAFETY: the caller's promises, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= LARGE {
            // The buffer may move to a new mapping: none kept beside it.
            release(&mut kept());
        }
        // SAFETY: the caller's promises, passed on.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size >= LARGE && !new.is_null() {
            advise(new, new_size);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large buffer allocated, written, grown and read through the
    /// allocator keeps every byte; a small one too. A freed large buffer
    /// is handed to the next allocation of its size (the same address),
    /// zeroed when asked zeroed; an allocation of another size gives the
    /// kept buffers back first. (One test: the kept buffers are shared by
    /// the process.)
    #[test]
    fn large_buffers_keep_their_contents_and_are_reused() {
        for n in [1000, LARGE / 8 + 3] {
            let layout = Layout::array::<f64>(n).unwrap();
            // SAFETY: a nonzero layout; the memory is written before read
            // and freed with its layout.
            unsafe {
                let p = HugePages.alloc(layout).cast::<f64>();
                assert!(!p.is_null());
                for i in 0..n {
                    p.add(i).write(i as f64);
                }
                let q = HugePages
                    .realloc(p.cast(), layout, layout.size() * 2)
                    .cast::<f64>();
                assert!(!q.is_null());
                assert!((0..n).all(|i| q.add(i).read() == i as f64));
                HugePages.dealloc(q.cast(), Layout::array::<f64>(2 * n).unwrap());
                let z = HugePages.alloc_zeroed(layout).cast::<f64>();
                assert!((0..n).all(|i| z.add(i).read() == 0.0));
                HugePages.dealloc(z.cast(), layout);
            }
        }
        let n = LARGE / 8 + 5;
        let layout = Layout::array::<f64>(n).unwrap();
        let other = Layout::array::<f64>(n + 1).unwrap();
        let held = || kept().iter().flatten().count();
        // SAFETY: nonzero layouts; each buffer freed once with its layout.
        unsafe {
            let p = HugePages.alloc(layout);
            p.cast::<f64>().add(n - 1).write(7.0);
            HugePages.dealloc(p, layout);
            assert_eq!(held(), 1, "the freed buffer is kept");
            // The same size again: the same buffer, as it was.
            let q = HugePages.alloc(layout);
            assert_eq!(q, p);
            assert_eq!(held(), 0);
            assert_eq!(q.cast::<f64>().add(n - 1).read(), 7.0);
            HugePages.dealloc(q, layout);
            // Zeroed: the same buffer, every byte 0.
            let z = HugePages.alloc_zeroed(layout);
            assert_eq!(z, p);
            let z = z.cast::<f64>();
            assert!((0..n).all(|i| z.add(i).read() == 0.0));
            HugePages.dealloc(z.cast(), layout);
            // Another size: the kept buffer is given back first.
            assert_eq!(held(), 1);
            let r = HugePages.alloc(other);
            assert_eq!(held(), 0);
            HugePages.dealloc(r, other);
            // At most SPARE_BYTES are kept.
            let big = Layout::from_size_align(SPARE_BYTES / 2 + 8, 8).unwrap();
            let (a, b) = (HugePages.alloc(big), HugePages.alloc(big));
            HugePages.dealloc(a, big);
            HugePages.dealloc(b, big);
            assert_eq!(held(), 1, "two would pass SPARE_BYTES");
            release(&mut kept());
        }
    }
}
