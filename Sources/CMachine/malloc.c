#include "CMachine.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int weave_set_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

void weave_trim_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
