#include "CMachine.h"

__thread void *weave_thread_slot = 0;
