/* The "env" block: see env_info.h. */
#include "env_info.h"

#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef HEAPLAB_GIT_COMMIT
#define HEAPLAB_GIT_COMMIT ""
#endif
#ifndef HEAPLAB_BUILD_TYPE
#define HEAPLAB_BUILD_TYPE ""
#endif

enum { HOSTNAME_MAX = 256, CPUINFO_MAX = 16384, CPU_MODEL_MAX = 256 };

#if defined(__clang__)
#define COMPILER_TEXT "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER_TEXT "gcc " __VERSION__
#else
#define COMPILER_TEXT "unknown"
#endif

/* The first "model name" of /proc/cpuinfo into out; 0 when found. */
static int cpu_model(char *out, size_t cap)
{
    static char text[CPUINFO_MAX];
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0)
        return -1;
    text[got] = '\0';
    const char *line = strstr(text, "model name");
    if (!line)
        return -1;
    const char *colon = strchr(line, ':');
    if (!colon)
        return -1;
    const char *start = colon + 1;
    while (*start == ' ' || *start == '\t')
        start++;
    size_t len = strcspn(start, "\n");
    if (len >= cap)
        len = cap - 1;
    memcpy(out, start, len);
    out[len] = '\0';
    return 0;
}

static const char *nonempty(const char *s)
{
    return s && s[0] ? s : NULL;
}

void env_info_write(json_writer *j)
{
    char host[HOSTNAME_MAX];
    char model[CPU_MODEL_MAX];
    struct utsname uts;
    int have_uts = uname(&uts) == 0;
    /* the environment overrides the commit recorded at configure time */
    const char *commit = nonempty(getenv("HEAPLAB_GIT_COMMIT"));
    if (!commit)
        commit = nonempty(HEAPLAB_GIT_COMMIT);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long page = sysconf(_SC_PAGESIZE);

    json_key(j, "env");
    json_object_begin(j);
    int have_host = gethostname(host, sizeof host) == 0;
    host[sizeof host - 1] = '\0'; /* gethostname need not terminate a cut name */
    json_kv_string(j, "hostname", have_host ? host : NULL);
    json_kv_string(j, "cpu_model", cpu_model(model, sizeof model) == 0 ? model : NULL);
    if (cores > 0)
        json_kv_int(j, "cores", cores);
    else
        json_kv_null(j, "cores");
    json_kv_string(j, "kernel", have_uts ? uts.release : NULL);
    json_kv_string(j, "glibc", gnu_get_libc_version());
    json_kv_string(j, "compiler", COMPILER_TEXT);
    json_kv_string(j, "git_commit", commit);
    json_kv_string(j, "build_type", nonempty(HEAPLAB_BUILD_TYPE));
    if (page > 0)
        json_kv_int(j, "page_size", page);
    else
        json_kv_null(j, "page_size");
    json_object_end(j);
}
