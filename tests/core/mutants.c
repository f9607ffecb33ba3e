/* heaplab core test: the safety net catches deliberate mistakes.
 *
 * Linked with core_mutants, a build of the core in which HEAPLAB_MUTANT=k
 * in the environment switches on mistake k (the CORE_MUTANT hooks: a lost
 * counter update, a skipped coalesce, a block in the wrong bin, a bin top
 * one entry too far, a span released with a block out, a large mapping left
 * out of the counters, blocks taken from a store not counted, a block
 * handed out of a medium stash and left in it). A seeded mix
 * of operations over every path runs with hl_stats_balanced() after every
 * operation and hl_check() every CHECK_EVERY; the first failure is a catch.
 *
 * Usage: core_mutants clean   (no mistake: nothing may be caught)
 *        core_mutants caught  (HEAPLAB_MUTANT set: it must be caught)
 * The mix runs in a child process, so that an abort by the core's own
 * always-on checks (which may stop a mistake before the others see it) is
 * told apart from a crash; the line "mistake k: NET" says which net it was. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

#define OPS 6000
#define SLOTS 1024
#define CHECK_EVERY 32
#define TRIM_EVERY 400
#define SCENE_EVERY 1000

static void *slots[SLOTS];

static size_t pick_size(uint64_t *rng)
{
    uint64_t r = tu_rand(rng);
    switch (r % 16) {
    case 0:
        return (1u << 20) + (r >> 8) % (3u << 20); /* large */
    case 1:
    case 2:
    case 3:
        return 9000 + (r >> 8) % 200000; /* medium */
    default:
        return 1 + (r >> 8) % 512; /* small */
    }
}

/* the net that caught a mistake after operation `op`, or NULL */
static const char *verdict(int op, bool with_check)
{
    hl_stats_t s;
    hl_stats(&s);
    if (!hl_stats_balanced(&s)) {
        printf("operation %d: the stats identity fails\n", op);
        fflush(stdout);
        return "identity";
    }
    if (with_check && hl_check() != 0) {
        printf("operation %d: hl_check reports\n", op);
        fflush(stdout);
        return "hl_check";
    }
    return NULL;
}

/* Scenes that reach paths a random mix seldom does: a burst of frees of
 * one class past its thread-cache bin (a flush into a store) and the burst
 * of mallocs that takes the blocks back from it; and a span left with one
 * block live when everything is trimmed. */
static const char *scenes(int op)
{
    enum { BURST = 1500 };
    static void *burst[BURST];
    for (int i = 0; i < BURST; i++)
        burst[i] = hl_malloc(48);
    for (int i = 0; i < BURST; i++)
        hl_free(burst[i]);
    const char *net = verdict(op, true);
    for (int i = 0; i < BURST && !net; i++)
        burst[i] = hl_malloc(48);
    if (!net)
        net = verdict(op, true);
    for (int i = 1; i < BURST && !net; i++)
        hl_free(burst[i]);
    if (!net) {
        hl_trim();
        net = verdict(op, true);
    }
    if (!net)
        hl_free(burst[0]);
    return net;
}

/* which net caught the mistake, or NULL */
static const char *run(void)
{
    uint64_t rng = 12345;
    for (int op = 1; op <= OPS; op++) {
        uint64_t r = tu_rand(&rng);
        size_t i = r % SLOTS;
        if (slots[i] && (r >> 20) % 4 == 0) {
            slots[i] = hl_realloc(slots[i], pick_size(&rng));
        } else {
            hl_free(slots[i]);
            slots[i] = (r >> 24) % 3 ? hl_malloc(pick_size(&rng)) : NULL;
        }
        if (op % TRIM_EVERY == 0)
            hl_trim();
        const char *net = verdict(op, op % CHECK_EVERY == 0);
        if (!net && op % SCENE_EVERY == 1)
            net = scenes(op);
        if (net)
            return net;
    }
    return NULL;
}

/* Runs the mix in a child: returns the net that caught a mistake, or NULL.
 * A child that aborts was stopped by the core's always-on checks (a
 * pointer it no longer knows, a broken tag) before the others ran. */
static const char *run_in_child(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        const char *net = run();
        fflush(stdout);
        _exit(net == NULL ? 0 : strcmp(net, "identity") == 0 ? 10 : 11);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return "no child";
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
        return "an always-on check (abort)";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
        return "identity";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 11)
        return "hl_check";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return NULL;
    return "a crash";
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *mutant = getenv("HEAPLAB_MUTANT");
    if (strcmp(mode, "clean") != 0 && strcmp(mode, "caught") != 0) {
        fprintf(stderr, "usage: core_mutants clean|caught\n");
        return 2;
    }
    const char *net = run_in_child();
    printf("mistake %s: %s\n", mutant ? mutant : "none", net ? net : "not caught");
    if (strcmp(mode, "clean") == 0)
        CHECK("no mistake: the identity and hl_check hold over every operation", net == NULL);
    else
        CHECK("the deliberate mistake is caught by the stats identity, hl_check or an always-on check",
              mutant && net != NULL && strcmp(net, "a crash") != 0 && strcmp(net, "no child") != 0);
    return tu_finish();
}
