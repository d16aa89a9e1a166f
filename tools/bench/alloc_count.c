/*
 * Heap allocation counter for the benchmark, loaded with LD_PRELOAD.
 *
 * Counts the bytes asked of malloc, calloc, realloc (the new size),
 * posix_memalign, aligned_alloc and memalign, and separately those of
 * requests of at least BENCH_ALLOC_BIG bytes.  At exit (or abort) it writes
 * "bytes calls big_bytes big_calls" to the file named by BENCH_ALLOC_OUT.
 *
 * The real allocator is reached through glibc's __libc_* entry points, so no
 * dlsym() (which allocates itself) is needed.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void *__libc_memalign(size_t align, size_t size);

static uint64_t total_bytes, total_calls, big_bytes, big_calls;
static uint64_t big_size = UINT64_MAX;
static char out_path[4096];

static void count(size_t size)
{
    __atomic_add_fetch(&total_bytes, size, __ATOMIC_RELAXED);
    __atomic_add_fetch(&total_calls, 1, __ATOMIC_RELAXED);
    if (size >= big_size) {
        __atomic_add_fetch(&big_bytes, size, __ATOMIC_RELAXED);
        __atomic_add_fetch(&big_calls, 1, __ATOMIC_RELAXED);
    }
}

void *malloc(size_t size)
{
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    count(n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    count(size);
    return __libc_realloc(ptr, size);
}

void *memalign(size_t align, size_t size)
{
    count(size);
    return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    count(size);
    return __libc_memalign(align, size);
}

int posix_memalign(void **ptr, size_t align, size_t size)
{
    void *p;

    if (!align || align % sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    count(size);
    p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *ptr = p;
    return 0;
}

static void dump(void)
{
    char line[128];
    int fd, len;

    if (!out_path[0])
        return;
    len = snprintf(line, sizeof(line), "%llu %llu %llu %llu\n",
                   (unsigned long long)total_bytes,
                   (unsigned long long)total_calls,
                   (unsigned long long)big_bytes,
                   (unsigned long long)big_calls);
    fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, len) != len)
        len = 0;
    close(fd);
}

static void on_abort(int sig)
{
    dump();
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void init(void)
{
    const char *out = getenv("BENCH_ALLOC_OUT");
    const char *big = getenv("BENCH_ALLOC_BIG");

    if (out && strlen(out) < sizeof(out_path))
        strcpy(out_path, out);
    if (big && *big)
        big_size = strtoull(big, NULL, 10);
    signal(SIGABRT, on_abort);
}

__attribute__((destructor)) static void fini(void)
{
    dump();
}
