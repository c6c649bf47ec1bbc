#include "CMachine.h"

#if !defined(__linux__)
#error "CMachine is Linux only: the futex system call"
#endif

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int weave_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_nanos) {
    struct timespec timeout = {
        .tv_sec = (time_t)(timeout_nanos / 1000000000u),
        .tv_nsec = (long)(timeout_nanos % 1000000000u),
    };
    return (int)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_nanos ? &timeout : NULL, NULL, 0);
}

int weave_futex_wake(uint32_t *word, int count) {
    return (int)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}
