/* What the replay needs of valgrind, in one place: whether it runs under
 * valgrind, and switching callgrind's counting off around the replay's own
 * waiting (so `--metric instructions` counts the allocator's work and the
 * replay's, never how long a thread waited for its turn). Without
 * valgrind's headers at build time: never under valgrind, nothing to
 * switch — and --metric instructions cannot run without valgrind anyway. */
#ifndef HEAPLAB_TRACE_VALGRIND_H
#define HEAPLAB_TRACE_VALGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define TRACE_HAVE_VALGRIND 1
#endif
#endif
#ifndef TRACE_HAVE_VALGRIND
#define TRACE_HAVE_VALGRIND 0
#endif

static inline int trace_under_valgrind(void)
{
#if TRACE_HAVE_VALGRIND
    return RUNNING_ON_VALGRIND != 0;
#else
    return 0;
#endif
}

/* Flips callgrind's counting for the calling thread; called in pairs. */
static inline void trace_toggle_counting(void)
{
#if TRACE_HAVE_VALGRIND
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

#endif
