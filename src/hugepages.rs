//! A global allocator that asks Linux for 2 MiB pages under large buffers.
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
//! The binary and the benchmarks install it:
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: gradcalc::hugepages::HugePages = gradcalc::hugepages::HugePages;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// Buffers of at least this many bytes get the advice.
pub const LARGE: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and aarch64 (2 MiB).
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, with `madvise(MADV_HUGEPAGE)` on every allocation
/// of [`LARGE`] bytes or more (see the module).
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

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
// memory it returned, which keeps its contents and its layout.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if layout.size() >= LARGE && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises, passed on.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if layout.size() >= LARGE && !ptr.is_null() {
            advise(ptr, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's promises, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
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
    /// allocator keeps every byte; a small one too.
    #[test]
    fn large_buffers_keep_their_contents() {
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
    }
}
