/* Program scripts: run a real command with the allocator preloaded.
 *
 * `setup` commands prepare inputs once, untimed and without the preload;
 * then the `program` command runs once with LD_PRELOAD set to the
 * allocator's preload library (nothing for the system allocator). The
 * figures come from wait4's rusage of the child: they are the program's own,
 * not the runner's. The child's stdout goes to /dev/null; the tail of its
 * stderr is kept for the failure message.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "script_internal.h"

extern char **environ;

enum {
    STDERR_TAIL = 4096,         /* bytes of the child's stderr kept */
    STDERR_TAIL_LINES = 3,      /* lines of it quoted in a failure message */
    EXIT_EXEC_FAILED = 127,     /* the shell's convention for "command not found" */
    NFTW_OPEN_FDS = 16,
    NS_PER_US = 1000,
    BYTES_PER_KIB = 1024,
};
static const long long NS_PER_S = 1000000000LL;
static const char TMP_TAG[] = "{tmp}";
static const char DIR_TAG[] = "{dir}";
static const char PRELOAD_VAR[] = "LD_PRELOAD=";

/* The last STDERR_TAIL bytes a child wrote on stderr. */
typedef struct tail_buf {
    char data[STDERR_TAIL];
    size_t len;
} tail_buf;

static void tail_add(tail_buf *t, const char *p, size_t n)
{
    if (n >= STDERR_TAIL) {
        memcpy(t->data, p + n - STDERR_TAIL, STDERR_TAIL);
        t->len = STDERR_TAIL;
        return;
    }
    if (t->len + n > STDERR_TAIL) {
        size_t drop = t->len + n - STDERR_TAIL;
        memmove(t->data, t->data + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
}

/* The last lines of the tail on one line, joined with " | ". */
static void tail_lines(const tail_buf *t, char *out, size_t outlen)
{
    size_t end = t->len;
    while (end > 0 && isspace((unsigned char)t->data[end - 1]))
        end--;
    size_t start = end;
    int lines = 0;
    while (start > 0 && lines < STDERR_TAIL_LINES) {
        start--;
        if (t->data[start] == '\n' && ++lines == STDERR_TAIL_LINES) {
            start++;
            break;
        }
    }
    size_t w = 0;
    for (size_t i = start; i < end && w + 4 < outlen; i++) {
        char c = t->data[i];
        if (c == '\n') {
            memcpy(out + w, " | ", 3);
            w += 3;
        } else {
            out[w++] = isprint((unsigned char)c) ? c : ' ';
        }
    }
    out[w] = '\0';
}

/* Appends to a growing string; returns -1 when out of memory. */
static int append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t ncap = (*len + n + 1) * 2;
        char *g = realloc(*buf, ncap);
        if (!g)
            return -1;
        *buf = g;
        *cap = ncap;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

/* Expands {tmp} and {dir} (the folder holding the script) everywhere, and $NAME / $$ except in single-quoted words
 * (whose stored form starts with '\''; see read_cmd in script_parse.c). */
static char *expand_word(const sc_script *s, const char *stored, const long long *pv,
                         const char *tmp)
{
    int single = stored[0] == '\'';
    const char *p = stored + 1;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (append(&buf, &len, &cap, "", 0) < 0)
        return NULL;
    while (*p) {
        if (strncmp(p, TMP_TAG, sizeof TMP_TAG - 1) == 0) {
            if (append(&buf, &len, &cap, tmp, strlen(tmp)) < 0)
                goto oom;
            p += sizeof TMP_TAG - 1;
            continue;
        }
        if (strncmp(p, DIR_TAG, sizeof DIR_TAG - 1) == 0) {
            const char *slash = strrchr(s->path, '/');
            const char *dir = slash ? s->path : ".";
            size_t dlen = slash ? (size_t)(slash - s->path) : 1;
            if (append(&buf, &len, &cap, dir, dlen) < 0)
                goto oom;
            p += sizeof DIR_TAG - 1;
            continue;
        }
        if (!single && p[0] == '$' && p[1] == '$') {
            if (append(&buf, &len, &cap, "$", 1) < 0)
                goto oom;
            p += 2;
            continue;
        }
        if (!single && p[0] == '$' && (isalpha((unsigned char)p[1]) || p[1] == '_')) {
            const char *e = p + 1;
            while (isalnum((unsigned char)*e) || *e == '_')
                e++;
            for (int i = 0; i < s->nparams; i++) {
                if (strlen(s->param_name[i]) == (size_t)(e - p - 1) &&
                    strncmp(s->param_name[i], p + 1, (size_t)(e - p - 1)) == 0) {
                    char num[32];
                    int n = snprintf(num, sizeof num, "%lld", pv[i]);
                    if (append(&buf, &len, &cap, num, (size_t)n) < 0)
                        goto oom;
                    break;
                }
            }
            p = e;
            continue;
        }
        if (append(&buf, &len, &cap, p, 1) < 0)
            goto oom;
        p++;
    }
    return buf;
oom:
    free(buf);
    return NULL;
}

static void free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

static char **expand_cmd(const sc_script *s, const sc_cmd *c, const long long *pv, const char *tmp)
{
    char **argv = calloc((size_t)c->argc + 1, sizeof *argv);
    if (!argv)
        return NULL;
    for (int i = 0; i < c->argc; i++) {
        if (!(argv[i] = expand_word(s, c->argv[i], pv, tmp))) {
            free_argv(argv);
            return NULL;
        }
    }
    return argv;
}

/* Whether environment entry `e` sets the variable that `assignment`
 * ("NAME=VALUE") sets. */
static int same_variable(const char *e, const char *assignment)
{
    size_t name_len = strcspn(assignment, "=");
    return strncmp(e, assignment, name_len) == 0 && e[name_len] == '=';
}

/* The environment for a child: ours without LD_PRELOAD, plus the preload
 * library when there is one, and the allocator's own setting for it
 * (`extra`, "NAME=VALUE" or NULL, replacing any inherited value). Built
 * before fork, because after fork in a threaded process only
 * async-signal-safe calls are allowed. */
static char **child_env(const char *preload, const char *extra, char **owned)
{
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, PRELOAD_VAR, sizeof PRELOAD_VAR - 1) != 0 &&
            !(extra && same_variable(*e, extra)))
            env[k++] = *e;
    if (preload && extra)
        env[k++] = (char *)extra;
    *owned = NULL;
    if (preload) {
        size_t len = sizeof PRELOAD_VAR + strlen(preload);
        if (!(*owned = malloc(len))) {
            free(env);
            return NULL;
        }
        snprintf(*owned, len, "%s%s", PRELOAD_VAR, preload);
        env[k++] = *owned;
    }
    env[k] = NULL;
    return env;
}

typedef struct child_result {
    int status;
    struct rusage ru;
    uint64_t wall_ns;
    tail_buf err;
} child_result;

/* Runs argv in `dir` and waits for it. Returns 0 when it ran (whatever its
 * exit status), -1 with errno when it could not be started. */
static int run_child(char **argv, const char *dir, const char *preload, const char *extra,
                     child_result *r)
{
    memset(r, 0, sizeof *r);
    char *owned;
    char **env = child_env(preload, extra, &owned);
    if (!env)
        return -1;
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int fds[2];
    if (null_fd < 0 || pipe2(fds, O_CLOEXEC) < 0) {
        int e = errno;
        if (null_fd >= 0)
            close(null_fd);
        free(env);
        free(owned);
        errno = e;
        return -1;
    }
    uint64_t t0 = wl_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(null_fd, STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0 || chdir(dir) < 0)
            _exit(EXIT_EXEC_FAILED);
        execvpe(argv[0], argv, env);
        /* Only async-signal-safe calls here: say why with write(2). */
        const char *why = strerror(errno);
        const char pre[] = "cannot run '";
        if (write(STDERR_FILENO, pre, sizeof pre - 1) < 0 ||
            write(STDERR_FILENO, argv[0], strlen(argv[0])) < 0 ||
            write(STDERR_FILENO, "': ", 3) < 0 || write(STDERR_FILENO, why, strlen(why)) < 0)
            _exit(EXIT_EXEC_FAILED);
        _exit(EXIT_EXEC_FAILED);
    }
    int fork_errno = errno;
    close(fds[1]);
    close(null_fd);
    free(env);
    free(owned);
    if (pid < 0) {
        close(fds[0]);
        errno = fork_errno;
        return -1;
    }
    char chunk[STDERR_TAIL];
    for (;;) {
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n > 0)
            tail_add(&r->err, chunk, (size_t)n);
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    while (wait4(pid, &r->status, 0, &r->ru) < 0) {
        if (errno != EINTR)
            return -1;
    }
    r->wall_ns = wl_now_ns() - t0;
    return 0;
}

/* "exited with status 2" / "was killed by signal 11 (Segmentation fault)" */
static void describe_status(int status, char *out, size_t len)
{
    if (WIFEXITED(status))
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, len, "ended with wait status %d", status);
}

/* Runs one command; 0 on a zero exit, else wl_fail and -1. */
static int run_checked(wl_ctx *ctx, const sc_script *s, const sc_cmd *c, const char *what,
                       const long long *pv, const char *tmp, const char *preload, child_result *r)
{
    char **argv = expand_cmd(s, c, pv, tmp);
    if (!argv) {
        wl_fail(ctx, "%s:%d: out of memory expanding the %s command", s->path, c->line, what);
        return -1;
    }
    /* the allocator's own setting goes only with its preload library */
    const char *extra = preload ? ctx->a->preload_env : NULL;
    int rc = run_child(argv, tmp, preload, extra, r);
    if (rc < 0) {
        wl_fail(ctx, "%s:%d: cannot start %s '%s': %s", s->path, c->line, what, argv[0],
                strerror(errno));
        free_argv(argv);
        return -1;
    }
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
        char st[128], tail[STDERR_TAIL];
        describe_status(r->status, st, sizeof st);
        tail_lines(&r->err, tail, sizeof tail);
        wl_fail(ctx, "%s:%d: %s '%s' %s%s%s", s->path, c->line, what, argv[0], st,
                tail[0] ? "; stderr: " : "", tail);
        free_argv(argv);
        return -1;
    }
    free_argv(argv);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static uint64_t timeval_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * (uint64_t)NS_PER_S + (uint64_t)tv.tv_usec * NS_PER_US;
}

int sc_run_program(wl_ctx *ctx)
{
    const sc_script *s = ctx->w->data;
    long long pv[WL_MAX_PARAMS];
    for (int i = 0; i < s->nparams; i++)
        pv[i] = wl_param(ctx, s->param_name[i]);
    const char *base = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/heaplab-%s-XXXXXX", base && *base ? base : "/tmp", s->name);
    if (!mkdtemp(tmp)) {
        wl_fail(ctx, "%s: cannot create a temporary folder %s: %s", s->path, tmp, strerror(errno));
        return -1;
    }
    int rc = -1;
    child_result r;
    for (int i = 0; i < s->nsetup; i++)
        if (run_checked(ctx, s, &s->setup[i], "setup", pv, tmp, NULL, &r) < 0)
            goto out;
    if (run_checked(ctx, s, &s->program, "program", pv, tmp, ctx->a->preload, &r) < 0)
        goto out;
    wl_metric(ctx, "wall_ns", (double)r.wall_ns, "ns", "lower");
    wl_metric(ctx, "user_ns", (double)timeval_ns(r.ru.ru_utime), "ns", "lower");
    wl_metric(ctx, "sys_ns", (double)timeval_ns(r.ru.ru_stime), "ns", "lower");
    /* ru_maxrss is in KiB on Linux */
    wl_metric(ctx, "max_rss_bytes", (double)r.ru.ru_maxrss * BYTES_PER_KIB, "bytes", "lower");
    wl_metric(ctx, "minor_faults", (double)r.ru.ru_minflt, "count", "lower");
    wl_metric(ctx, "major_faults", (double)r.ru.ru_majflt, "count", "lower");
    rc = 0;
out:
    nftw(tmp, remove_entry, NFTW_OPEN_FDS, FTW_DEPTH | FTW_PHYS);
    return rc;
}
