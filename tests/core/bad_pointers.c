/* heaplab core test: pointers heaplab must refuse, and the line it refuses
 * them with. Each case runs in a forked child whose stderr is read back; it
 * must die of SIGABRT after writing exactly one line that starts with the
 * expected text:
 *   - realloc() and malloc_usable_size() of a freed or interior pointer
 *     name the function that was called (small, medium and large blocks);
 *   - a medium block written past its usable size breaks the boundary tag
 *     of the block after it: freeing either block must end the program,
 *     whether the freed block goes to the reuse cache (the first free of a
 *     size) or is merged with its neighbours (the reuse cache is full).
 *   - the line of a broken tag is exact: the function that was called,
 *     "corrupted boundary tag after block" (the block that was written
 *     past) or "of block" (the block after it, whose tag was hit), and the
 *     address the program was given for that block; through free and
 *     through a realloc that stays in the medium heap (growing in place
 *     or shrinking), one that moves the block to a small or large size,
 *     and realloc(p, 0).
 * The cases run first, from a heap that has served nothing else, so a
 * child's first medium free of a size does go to the reuse cache. */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define SMALL_SIZE ((size_t)48)
#define MEDIUM_SIZE ((size_t)100 * KiB)
#define LARGE_SIZE ((size_t)4 * MiB)
/* three adjacent medium blocks of this size; more freed blocks of one size
 * than the reuse cache keeps of a bin (48) */
#define TAG_TEST_SIZE ((size_t)40000)
#define CACHE_FILLERS 48
/* exit statuses of a child that could not set its case up */
#define SETUP_NOT_ADJACENT 7
#define SURVIVED 0
#define LINE_MAX_BYTES 256

/* The line a child expects to die with, written by the child (which alone
 * knows its blocks' addresses) into memory shared with the parent. */
static char *expected_line;

/* Runs fn in a child; returns 1 when it died of SIGABRT after writing
 * exactly one line starting with `expect` to stderr. Otherwise writes what
 * the child did into why[0..n). */
/* the stderr of the last child dies_with ran */
static char last_line[512];

static int dies_with(void (*fn)(void), const char *expect, char *why, size_t why_size)
{
    char *buf = last_line;
    size_t n;
    int status = tu_run_child(fn, SURVIVED, buf, sizeof last_line, &n);
    if (status == -1) {
        snprintf(why, why_size, "no child could be run\n");
        return 0;
    }
    int ok = tu_aborted_with_line(status, buf, n, expect);
    if (!ok) {
        const char *what = "child exit status";
        if (WIFSIGNALED(status))
            what = "child killed by signal";
        else if (WEXITSTATUS(status) == SURVIVED)
            what = "child survived, exit status";
        else if (WEXITSTATUS(status) == SETUP_NOT_ADJACENT)
            what = "setup failed (the three medium blocks are not adjacent), exit status";
        int code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
        snprintf(why, why_size, "%s %d; stderr: %s%s", what, code, n ? buf : "(nothing)\n",
                 n && buf[n - 1] != '\n' ? "\n" : "");
    }
    return ok;
}

/* A named check that fn dies with one line starting with `expect`; on
 * failure, what the child did follows the FAIL line. */
#define CHECK_DIES(name, fn, expect)                        \
    do {                                                    \
        char why_[640] = "";                                \
        int ok_ = dies_with(fn, expect, why_, sizeof why_); \
        CHECK(name, ok_);                                   \
        if (!ok_)                                           \
            printf("     %s", why_);                        \
    } while (0)

/* A named check that fn dies with exactly the line it wrote into
 * expected_line before the call that must end it. */
#define CHECK_DIES_EXACTLY(name, fn)                                                             \
    do {                                                                                         \
        char why_[640] = "";                                                                     \
        expected_line[0] = 0;                                                                    \
        int ok_ = dies_with(fn, "heaplab: ", why_, sizeof why_) && expected_line[0] != 0;        \
        if (ok_ && strcmp(last_line, expected_line) != 0) {                                      \
            snprintf(why_, sizeof why_, "line: %s     expected: %s", last_line, expected_line); \
            ok_ = 0;                                                                             \
        }                                                                                        \
        CHECK(name, ok_);                                                                        \
        if (!ok_)                                                                                \
            printf("     %s", why_);                                                             \
    } while (0)

/* ---- realloc and malloc_usable_size of pointers that are not live blocks */

static void *freed(size_t size)
{
    void *p = hl_malloc(size);
    hl_free(p);
    return p;
}
/* an address inside a live block, 16-byte aligned, not its start */
static void *interior(size_t size, size_t offset)
{
    char *p = hl_malloc(size);
    return p + offset;
}

static void realloc_freed_small(void)
{
    hl_realloc(freed(SMALL_SIZE), 2 * SMALL_SIZE);
}
static void realloc_freed_medium(void)
{
    hl_realloc(freed(MEDIUM_SIZE), 2 * MEDIUM_SIZE);
}
static void realloc_freed_large(void)
{
    hl_realloc(freed(LARGE_SIZE), 2 * LARGE_SIZE);
}
static void realloc_interior_small(void)
{
    hl_realloc(interior(64, 16), 200);
}
static void realloc_interior_medium(void)
{
    hl_realloc(interior(MEDIUM_SIZE, 4096), 2 * MEDIUM_SIZE);
}
static void realloc_interior_large(void)
{
    hl_realloc(interior(LARGE_SIZE, 4096), 2 * LARGE_SIZE);
}

static void usable_freed_small(void)
{
    hl_usable_size(freed(SMALL_SIZE));
}
static void usable_freed_medium(void)
{
    hl_usable_size(freed(MEDIUM_SIZE));
}
static void usable_freed_large(void)
{
    hl_usable_size(freed(LARGE_SIZE));
}
static void usable_interior_small(void)
{
    hl_usable_size(interior(64, 16));
}
static void usable_interior_medium(void)
{
    hl_usable_size(interior(MEDIUM_SIZE, 4096));
}
static void usable_interior_large(void)
{
    hl_usable_size(interior(LARGE_SIZE, 4096));
}

/* ---- a medium block written past its end ------------------------------- */

enum which_free { FREE_OVERFLOWED, FREE_NEXT };
enum which_path { FIRST_FREE_TO_CACHE, MERGE_CACHE_FULL };

/* Three adjacent blocks a, b, c; `bytes` written just past b's usable
 * size (into c's boundary tag); then b or c is freed. With
 * MERGE_CACHE_FULL, more blocks of the same size than the reuse cache
 * holds were freed first, so the free merges instead of caching. */
static void overflow_then_free(size_t bytes, enum which_free which, enum which_path path)
{
    void *fillers[CACHE_FILLERS];
    if (path == MERGE_CACHE_FULL)
        for (int i = 0; i < CACHE_FILLERS; i++)
            fillers[i] = hl_malloc(TAG_TEST_SIZE);
    char *a = hl_malloc(TAG_TEST_SIZE), *b = hl_malloc(TAG_TEST_SIZE), *c = hl_malloc(TAG_TEST_SIZE);
    size_t ua = hl_usable_size(a), ub = hl_usable_size(b);
    /* adjacent: each block starts a header's length after the end of the
     * one before (a header is more than 0 and at most 64 bytes) */
    size_t gap_ab = (size_t)(b - (a + ua)), gap_bc = (size_t)(c - (b + ub));
    if (b <= a || c <= b || gap_ab == 0 || gap_ab > 64 || gap_bc != gap_ab)
        _exit(SETUP_NOT_ADJACENT);
    memset(a, 'a', ua);
    memset(b, 'b', ub);
    memset(c, 'c', hl_usable_size(c));
    if (path == MERGE_CACHE_FULL)
        for (int i = 0; i < CACHE_FILLERS; i++)
            hl_free(fillers[i]);
    memset(b + ub, 'A', bytes);
    hl_free(which == FREE_OVERFLOWED ? b : c);
}

static void overflow1_free_cached(void)
{
    overflow_then_free(1, FREE_OVERFLOWED, FIRST_FREE_TO_CACHE);
}
static void overflow8_free_cached(void)
{
    overflow_then_free(8, FREE_OVERFLOWED, FIRST_FREE_TO_CACHE);
}
static void overflow1_free_next_cached(void)
{
    overflow_then_free(1, FREE_NEXT, FIRST_FREE_TO_CACHE);
}
static void overflow8_free_next_cached(void)
{
    overflow_then_free(8, FREE_NEXT, FIRST_FREE_TO_CACHE);
}
static void overflow1_free_merged(void)
{
    overflow_then_free(1, FREE_OVERFLOWED, MERGE_CACHE_FULL);
}
static void overflow8_free_merged(void)
{
    overflow_then_free(8, FREE_OVERFLOWED, MERGE_CACHE_FULL);
}
static void overflow1_free_next_merged(void)
{
    overflow_then_free(1, FREE_NEXT, MERGE_CACHE_FULL);
}
static void overflow8_free_next_merged(void)
{
    overflow_then_free(8, FREE_NEXT, MERGE_CACHE_FULL);
}

/* ---- the exact line of a broken tag, through free and realloc ---------- */

enum tag_call { CALL_FREE, CALL_REALLOC_GROW, CALL_REALLOC_SHRINK, CALL_REALLOC_TO_SMALL, CALL_REALLOC_TO_LARGE,
                CALL_REALLOC_TO_ZERO };

/* Three adjacent blocks a, b, c, one byte written past b; then b or c goes
 * to free, or to a realloc to a medium size (half again as big: it grows in
 * place or would; half as big: it shrinks in place), or to a realloc that
 * moves it to a small or a large block, or to realloc(p, 0). Before that call, the
 * line it must end the program with goes into expected_line. */
static void overflow1_then(enum tag_call call, enum which_free which)
{
    char *a = hl_malloc(TAG_TEST_SIZE), *b = hl_malloc(TAG_TEST_SIZE), *c = hl_malloc(TAG_TEST_SIZE);
    size_t ua = hl_usable_size(a), ub = hl_usable_size(b);
    size_t gap_ab = (size_t)(b - (a + ua)), gap_bc = (size_t)(c - (b + ub));
    if (b <= a || c <= b || gap_ab == 0 || gap_ab > 64 || gap_bc != gap_ab)
        _exit(SETUP_NOT_ADJACENT);
    b[ub] = 'A';
    char *target = which == FREE_OVERFLOWED ? b : c;
    snprintf(expected_line, LINE_MAX_BYTES, "heaplab: %s(): corrupted boundary tag %s block 0x%" PRIxPTR "\n",
             call == CALL_FREE ? "free" : "realloc", which == FREE_OVERFLOWED ? "after" : "of", (uintptr_t)target);
    switch (call) {
    case CALL_FREE:
        hl_free(target);
        break;
    case CALL_REALLOC_GROW:
        hl_realloc(target, TAG_TEST_SIZE + TAG_TEST_SIZE / 2);
        break;
    case CALL_REALLOC_SHRINK:
        hl_realloc(target, TAG_TEST_SIZE / 2);
        break;
    case CALL_REALLOC_TO_SMALL:
        hl_realloc(target, 100);
        break;
    case CALL_REALLOC_TO_LARGE:
        hl_realloc(target, (size_t)2 << 20);
        break;
    case CALL_REALLOC_TO_ZERO:
        hl_realloc(target, 0);
        break;
    }
}

static void exact_free_overflowed(void)
{
    overflow1_then(CALL_FREE, FREE_OVERFLOWED);
}
static void exact_free_next(void)
{
    overflow1_then(CALL_FREE, FREE_NEXT);
}
static void exact_realloc_grow_overflowed(void)
{
    overflow1_then(CALL_REALLOC_GROW, FREE_OVERFLOWED);
}
static void exact_realloc_grow_next(void)
{
    overflow1_then(CALL_REALLOC_GROW, FREE_NEXT);
}
static void exact_realloc_shrink_overflowed(void)
{
    overflow1_then(CALL_REALLOC_SHRINK, FREE_OVERFLOWED);
}
static void exact_realloc_shrink_next(void)
{
    overflow1_then(CALL_REALLOC_SHRINK, FREE_NEXT);
}
static void exact_realloc_to_small(void)
{
    overflow1_then(CALL_REALLOC_TO_SMALL, FREE_OVERFLOWED);
}
static void exact_realloc_to_large(void)
{
    overflow1_then(CALL_REALLOC_TO_LARGE, FREE_OVERFLOWED);
}
static void exact_realloc_to_zero_next(void)
{
    overflow1_then(CALL_REALLOC_TO_ZERO, FREE_NEXT);
}

/* the same blocks without the overflow: the setup itself is sound */
static void no_overflow(enum which_path path)
{
    overflow_then_free(0, FREE_OVERFLOWED, path);
    _exit(hl_check() == 0 ? 0 : 1);
}
static void no_overflow_cached(void)
{
    no_overflow(FIRST_FREE_TO_CACHE);
}
static void no_overflow_merged(void)
{
    no_overflow(MERGE_CACHE_FULL);
}

/* 1 when fn exits with status 0 in a child */
static int exits_cleanly(void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
    static const char realloc_line[] = "heaplab: realloc(): invalid pointer";
    static const char usable_line[] = "heaplab: malloc_usable_size(): invalid pointer";
    static const char any_line[] = "heaplab: ";
    expected_line = mmap(NULL, LINE_MAX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (expected_line == MAP_FAILED) {
        printf("FAIL no shared page for the expected lines\n");
        return 1;
    }

    CHECK("the tag-overflow setup without an overflow frees cleanly (cache path)", exits_cleanly(no_overflow_cached));
    CHECK("the tag-overflow setup without an overflow frees cleanly (merge path)", exits_cleanly(no_overflow_merged));

    CHECK_DIES("realloc of a freed small block aborts naming realloc()", realloc_freed_small, realloc_line);
    CHECK_DIES("realloc of a freed medium block aborts naming realloc()", realloc_freed_medium, realloc_line);
    CHECK_DIES("realloc of a freed large block aborts naming realloc()", realloc_freed_large, realloc_line);
    CHECK_DIES("realloc of an interior small pointer aborts naming realloc()", realloc_interior_small, realloc_line);
    CHECK_DIES("realloc of an interior medium pointer aborts naming realloc()", realloc_interior_medium, realloc_line);
    CHECK_DIES("realloc of an interior large pointer aborts naming realloc()", realloc_interior_large, realloc_line);

    CHECK_DIES("malloc_usable_size of a freed small block aborts naming malloc_usable_size()",
               usable_freed_small, usable_line);
    CHECK_DIES("malloc_usable_size of a freed medium block aborts naming malloc_usable_size()",
               usable_freed_medium, usable_line);
    CHECK_DIES("malloc_usable_size of a freed large block aborts naming malloc_usable_size()",
               usable_freed_large, usable_line);
    CHECK_DIES("malloc_usable_size of an interior small pointer aborts naming malloc_usable_size()",
               usable_interior_small, usable_line);
    CHECK_DIES("malloc_usable_size of an interior medium pointer aborts naming malloc_usable_size()",
               usable_interior_medium, usable_line);
    CHECK_DIES("malloc_usable_size of an interior large pointer aborts naming malloc_usable_size()",
               usable_interior_large, usable_line);

    CHECK_DIES("free of a medium block written 1 byte past its end aborts (first free, reuse cache)",
               overflow1_free_cached, any_line);
    CHECK_DIES("free of a medium block written 8 bytes past its end aborts (first free, reuse cache)",
               overflow8_free_cached, any_line);
    CHECK_DIES("free of the block after one overflowed by 1 byte aborts (first free, reuse cache)",
               overflow1_free_next_cached, any_line);
    CHECK_DIES("free of the block after one overflowed by 8 bytes aborts (first free, reuse cache)",
               overflow8_free_next_cached, any_line);
    CHECK_DIES("free of a medium block written 1 byte past its end aborts (reuse cache full: merge)",
               overflow1_free_merged, any_line);
    CHECK_DIES("free of a medium block written 8 bytes past its end aborts (reuse cache full: merge)",
               overflow8_free_merged, any_line);
    CHECK_DIES("free of the block after one overflowed by 1 byte aborts (reuse cache full: merge)",
               overflow1_free_next_merged, any_line);
    CHECK_DIES("free of the block after one overflowed by 8 bytes aborts (reuse cache full: merge)",
               overflow8_free_next_merged, any_line);


    CHECK_DIES_EXACTLY("free of a medium block written 1 byte past its end: "
                       "\"heaplab: free(): corrupted boundary tag after block <its address>\"",
                       exact_free_overflowed);
    CHECK_DIES_EXACTLY("free of the block after one overflowed by 1 byte: "
                       "\"heaplab: free(): corrupted boundary tag of block <its address>\"",
                       exact_free_next);
    CHECK_DIES_EXACTLY("realloc growing a medium block written 1 byte past its end: "
                       "\"heaplab: realloc(): corrupted boundary tag after block <its address>\"",
                       exact_realloc_grow_overflowed);
    CHECK_DIES_EXACTLY("realloc growing the block after one overflowed by 1 byte: "
                       "\"heaplab: realloc(): corrupted boundary tag of block <its address>\"",
                       exact_realloc_grow_next);
    CHECK_DIES_EXACTLY("realloc shrinking a medium block written 1 byte past its end: "
                       "\"heaplab: realloc(): corrupted boundary tag after block <its address>\"",
                       exact_realloc_shrink_overflowed);
    CHECK_DIES_EXACTLY("realloc shrinking the block after one overflowed by 1 byte: "
                       "\"heaplab: realloc(): corrupted boundary tag of block <its address>\"",
                       exact_realloc_shrink_next);
    CHECK_DIES_EXACTLY("realloc moving a medium block written 1 byte past its end to a small size: "
                       "\"heaplab: realloc(): corrupted boundary tag after block <its address>\" (before the copy)",
                       exact_realloc_to_small);
    CHECK_DIES_EXACTLY("realloc moving a medium block written 1 byte past its end to a large size: "
                       "\"heaplab: realloc(): corrupted boundary tag after block <its address>\" (before the copy)",
                       exact_realloc_to_large);
    CHECK_DIES_EXACTLY("realloc(p, 0) of the block after one overflowed by 1 byte: "
                       "\"heaplab: realloc(): corrupted boundary tag of block <its address>\"",
                       exact_realloc_to_zero_next);

    CHECK("hl_check clean in the parent after the cases", hl_check() == 0);
    return tu_finish();
}
