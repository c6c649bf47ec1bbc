// What Swift cannot say by itself: the futex system call (variadic syscall(2) is not imported), the
// CPU's cycle counter (an intrinsic), glibc's malloc tuning (<malloc.h> is not in the Glibc
// module) and a thread-local variable (Swift has none). Used by WeaveSupport's ParkingLock and
// MonotonicClock, WeaveDI's ThreadFrame, and weave-healthd.
#ifndef WEAVE_CMACHINE_H
#define WEAVE_CMACHINE_H

#include <stdint.h>

/// The calling thread's pointer slot for WeaveDI's per-thread resolver state (NULL until set). A
/// thread-local read is one instruction here, where pthread_getspecific is a call through the PLT.
/// Initial-exec: the slot is reserved at program start (the library is linked, never dlopen'd).
extern __thread void *weave_thread_slot __attribute__((tls_model("initial-exec")));

static inline void *weave_get_thread_slot(void) { return weave_thread_slot; }
static inline void weave_set_thread_slot(void *value) { weave_thread_slot = value; }

/// Sleeps while `*word == expected` (FUTEX_WAIT_PRIVATE), until woken, a signal, or `timeout_nanos`
/// (0: no timeout). Returns 0, or -1 with errno set (EAGAIN when `*word != expected`).
int weave_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_nanos);

/// Wakes up to `count` threads sleeping on `word` (FUTEX_WAKE_PRIVATE); returns how many woke.
int weave_futex_wake(uint32_t *word, int count);

/// Fixes glibc's mmap and trim thresholds (mallopt M_MMAP_THRESHOLD, M_TRIM_THRESHOLD): blocks up
/// to `mmap_threshold` come from the heap, and the heap keeps up to `trim_threshold` of freed memory,
/// so large buffers freed and allocated again are reused rather than mapped, faulted in page by page
/// and unmapped each time; `weave_trim_heap` gives that memory back. Every thread then allocates
/// from the main arena (M_ARENA_MAX 1), the one whose free top malloc_trim returns; call it before
/// starting threads. Returns 1 on success, 0 where glibc is not the allocator.
int weave_keep_freed_memory(int mmap_threshold, int trim_threshold);

/// Gives the free memory of every malloc arena back to the system (malloc_trim(0)); a no-op where
/// glibc is not the allocator.
void weave_trim_heap(void);

/// Whether `weave_cycle_counter` is available: x86-64 (RDTSC) and arm64 (CNTVCT_EL0).
static inline int weave_has_cycle_counter(void) {
#if defined(__x86_64__) || defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/// The CPU's time-stamp counter: monotonic and synchronised across cores where the kernel uses it
/// as its clock source (check that before relying on it); a few nanoseconds to read.
static inline uint64_t weave_cycle_counter(void) {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t value;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(value));
    return value;
#else
    return 0;
#endif
}

/// Ticks per second of `weave_cycle_counter` where the CPU says (arm64's CNTFRQ_EL0); 0 where it
/// must be measured (x86-64).
static inline uint64_t weave_cycle_counter_frequency(void) {
#if defined(__aarch64__)
    uint64_t value;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(value));
    return value;
#else
    return 0;
#endif
}

/// Tells the CPU this thread is spinning (PAUSE / YIELD), in a wait loop.
static inline void weave_spin_hint(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
