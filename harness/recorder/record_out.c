/* Per-thread buffers and the raw file: see record.h and trace/trace_raw.h.
 *
 * A thread's buffer is mapped on its first call and written out as one
 * chunk (one write(2)) when it fills, when the thread exits (a pthread key
 * destructor), and at process exit (a library destructor, which walks the
 * list of live buffers). After its buffer is gone a thread still calls
 * free from later destructors: those calls go out one event per chunk.
 * Each buffer has a lock because the process-exit flush may run while
 * other threads are still allocating; the owner takes it uncontended. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { BUF_EVENTS = 4096, PATH_MAX_LEN = 4096, EXEC_NAME_TRIES = 100 };

typedef struct rec_buf {
    atomic_flag lock;
    struct rec_buf *next; /* the list of live buffers, under list_lock */
    struct rec_buf *prev;
    trace_raw_chunk head; /* written together with ev[] */
    trace_raw_event ev[BUF_EVENTS];
} rec_buf;
_Static_assert(offsetof(rec_buf, ev) == offsetof(rec_buf, head) + sizeof(trace_raw_chunk),
               "a chunk's header and events are written with one write(2)");

/* A thread is NEW (no buffer yet), LIVE, or DONE (buffer flushed at exit). */
enum { THREAD_NEW = 0, THREAD_LIVE = 1, THREAD_DONE = 2 };

static __thread rec_buf *self __attribute__((tls_model("initial-exec")));
static __thread int self_state __attribute__((tls_model("initial-exec")));
static __thread uint32_t self_number __attribute__((tls_model("initial-exec")));
static __thread uint32_t self_seq __attribute__((tls_model("initial-exec")));

static char raw_dir[PATH_MAX_LEN];
static int enabled;
static int raw_fd = -1;
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static rec_buf *live_list;
static atomic_uint next_thread;
static atomic_int exited; /* the process-exit flush has run */
static pthread_key_t exit_key;

static void say(const char *msg)
{
    (void)!write(STDERR_FILENO, msg, strlen(msg));
}

/* dst = dir "/" pid [ "." n ] ".raw", without stdio */
static void raw_path(char *dst, size_t cap, int n)
{
    char digits[24];
    int len = 0;
    for (unsigned long v = (unsigned long)getpid(); len == 0 || v; v /= 10)
        digits[len++] = (char)('0' + v % 10);
    size_t at = strlen(raw_dir);
    memcpy(dst, raw_dir, at);
    dst[at++] = '/';
    while (len)
        dst[at++] = digits[--len];
    if (n > 0) {
        dst[at++] = '.';
        if (n >= 10)
            dst[at++] = (char)('0' + n / 10);
        dst[at++] = (char)('0' + n % 10);
    }
    memcpy(dst + at, ".raw", 5);
    (void)cap;
}

/* The file is opened on the first write, so a child that only execs
 * leaves no file of its own. Called with fd_lock held. */
static int open_raw(void)
{
    if (raw_fd >= 0 || !enabled)
        return raw_fd;
    char path[PATH_MAX_LEN + 32];
    for (int n = 0; n < EXEC_NAME_TRIES; n++) {
        raw_path(path, sizeof path, n);
        raw_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (raw_fd >= 0 || errno != EEXIST)
            break;
    }
    if (raw_fd < 0) {
        enabled = 0;
        say("heaplab-record: cannot create a raw trace file in $" TRACE_RAW_DIR_ENV
            "; recording stopped\n");
    }
    return raw_fd;
}

static void write_chunk(const void *data, size_t len)
{
    pthread_mutex_lock(&fd_lock);
    int fd = open_raw();
    const char *p = data;
    while (fd >= 0 && len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        p += n;
        len -= (size_t)n;
    }
    pthread_mutex_unlock(&fd_lock);
}

/* Called with b->lock held. */
static void flush_buf(rec_buf *b)
{
    if (!b->head.count)
        return;
    write_chunk(&b->head, sizeof b->head + b->head.count * sizeof(trace_raw_event));
    b->head.seq++;
    b->head.count = 0;
}

static void lock_buf(rec_buf *b)
{
    while (atomic_flag_test_and_set_explicit(&b->lock, memory_order_acquire))
        ;
}

static void unlock_buf(rec_buf *b)
{
    atomic_flag_clear_explicit(&b->lock, memory_order_release);
}

static void unlink_buf(rec_buf *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        live_list = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

static void thread_exit(void *arg)
{
    rec_buf *b = arg;
    pthread_mutex_lock(&list_lock);
    unlink_buf(b);
    pthread_mutex_unlock(&list_lock);
    lock_buf(b);
    flush_buf(b);
    self_seq = b->head.seq;
    unlock_buf(b);
    munmap(b, sizeof *b);
    self = NULL;
    self_state = THREAD_DONE;
}

/* noinline: once per thread */
__attribute__((noinline)) static rec_buf *start_thread(void)
{
    rec_buf *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (b == MAP_FAILED)
        return NULL;
    atomic_flag_clear(&b->lock);
    self_number = atomic_fetch_add(&next_thread, 1);
    b->head = (trace_raw_chunk){TRACE_RAW_MAGIC, self_number, 0, 0};
    pthread_mutex_lock(&list_lock);
    b->prev = NULL;
    b->next = live_list;
    if (live_list)
        live_list->prev = b;
    live_list = b;
    pthread_mutex_unlock(&list_lock);
    self = b;
    self_state = THREAD_LIVE;
    (void)pthread_setspecific(exit_key, b);
    return b;
}

int rec_out_init(const char *dir)
{
    if (!dir || !*dir || strlen(dir) >= sizeof raw_dir)
        return -1;
    memcpy(raw_dir, dir, strlen(dir) + 1);
    if (pthread_key_create(&exit_key, thread_exit) != 0)
        return -1;
    enabled = 1;
    return 0;
}

void rec_out_event(const trace_raw_event *e)
{
    if (!enabled)
        return;
    rec_buf *b = self;
    if (!b) {
        if (self_state == THREAD_DONE) {
            /* after this thread's exit flush: one event, one chunk */
            struct {
                trace_raw_chunk head;
                trace_raw_event ev;
            } one = {{TRACE_RAW_MAGIC, self_number, 1, self_seq++}, *e};
            write_chunk(&one, sizeof one);
            return;
        }
        b = start_thread();
        if (!b)
            return;
    }
    lock_buf(b);
    b->ev[b->head.count++] = *e;
    if (b->head.count == BUF_EVENTS || atomic_load_explicit(&exited, memory_order_relaxed))
        flush_buf(b);
    unlock_buf(b);
}

void rec_out_flush_all(void)
{
    if (!enabled)
        return;
    pthread_mutex_lock(&list_lock);
    for (rec_buf *b = live_list; b; b = b->next) {
        lock_buf(b);
        flush_buf(b);
        unlock_buf(b);
    }
    atomic_store(&exited, 1);
    pthread_mutex_unlock(&list_lock);
}

void rec_out_fork_prepare(void)
{
    pthread_mutex_lock(&list_lock);
    pthread_mutex_lock(&fd_lock);
}

void rec_out_fork_parent(void)
{
    pthread_mutex_unlock(&fd_lock);
    pthread_mutex_unlock(&list_lock);
}

/* The child starts a trace of its own: a new raw file (opened when it
 * first writes), its forking thread as thread 0, and none of the parent's
 * unwritten events (the parent writes those). Buffers of the parent's
 * other threads are not in the child; their mappings are left alone. */
void rec_out_fork_child(void)
{
    if (raw_fd >= 0)
        close(raw_fd);
    raw_fd = -1;
    live_list = NULL;
    atomic_store(&next_thread, 1);
    self_number = 0;
    self_seq = 0;
    if (self) {
        self->head = (trace_raw_chunk){TRACE_RAW_MAGIC, 0, 0, 0};
        self->prev = self->next = NULL;
        atomic_flag_clear(&self->lock);
        live_list = self;
    }
    pthread_mutex_init(&fd_lock, NULL);
    pthread_mutex_init(&list_lock, NULL);
}
