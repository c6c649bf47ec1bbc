#include "CMachine.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int weave_keep_freed_memory(int mmap_threshold, int trim_threshold) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, 1) && mallopt(M_MMAP_THRESHOLD, mmap_threshold) && mallopt(M_TRIM_THRESHOLD, trim_threshold);
#else
    (void)mmap_threshold;
    (void)trim_threshold;
    return 0;
#endif
}

void weave_trim_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
