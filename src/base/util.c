#define _DEFAULT_SOURCE /* madvise */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The longest run of s[0..len-1] without a space: its start, and its length in *run. */
static size_t longest_run(const char *s, size_t len, size_t *run)
{
    size_t best = 0, best_len = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && s[j] != ' ') j++;
        if (j - i > best_len) best = i, best_len = j - i;
        i = j + 1;
    }
    *run = best_len;
    return best;
}

size_t error_shorten(char *s, size_t len, size_t cap)
{
    /* A run kept at least this long keeps its ends readable: a/b/.../y/z.bin. */
    enum { KEEP = 24 };
    while (len > cap) {
        size_t run, at = longest_run(s, len, &run);
        if (run <= KEEP + 3) break;
        /* What the run keeps around "...": all but the excess, or KEEP and the next run. */
        size_t excess = len - cap + 3, keep = excess < run && run - excess >= KEEP ? run - excess : KEEP;
        size_t head = at + keep / 2, tail = at + run - (keep - keep / 2);
        /* Cut between UTF-8 characters, never inside one (10xxxxxx continues one). */
        while (head > at && ((unsigned char)s[head] & 0xC0) == 0x80) head--;
        while (tail < at + run && ((unsigned char)s[tail] & 0xC0) == 0x80) tail++;
        if (tail - head <= 3) break;  /* nothing to gain: the cut would not shorten */
        memcpy(s + head, "...", 3);
        memmove(s + head + 3, s + tail, len - tail + 1);
        len -= tail - head - 3;
    }
    if (len > cap) {  /* no run long enough to shorten: the plain cut, between characters */
        len = cap;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
        s[len] = 0;
    }
    return len;
}

int error_set(Error *err, const char *fmt, ...)
{
    if (!err) return -1;
    /* Formatted whole first (into a buffer of its own: an argument may be err->msg), so
     * that a message too long for an Error can keep its end, where the reason is. */
    char small[ERROR_LEN], *text = small;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    size_t len = n > 0 ? (size_t)n : 0;
    if (n < 0) small[0] = 0;
    if (len >= sizeof small) {
        char *whole = malloc(len + 1);
        if (whole && vsnprintf(whole, len + 1, fmt, again) == n) {
            text = whole;
        } else {  /* no memory: the plain cut vsnprintf made */
            free(whole);
            len = sizeof small - 1;
        }
    }
    va_end(again);
    len = error_shorten(text, len, sizeof err->msg - 1);
    memcpy(err->msg, text, len + 1);
    if (text != small) free(text);
    return -1;
}

static void *check_alloc(void *p, size_t bytes)
{
    if (!p && bytes) {
        fprintf(stderr, "nmt: out of memory allocating %zu bytes\n", bytes);
        exit(3);
    }
    return p;
}

void *xmalloc(size_t bytes) { return check_alloc(malloc(bytes ? bytes : 1), bytes); }
void *xcalloc(size_t count, size_t bytes) { return check_alloc(calloc(count ? count : 1, bytes ? bytes : 1), count * bytes); }
void *xrealloc(void *p, size_t bytes) { return check_alloc(realloc(p, bytes ? bytes : 1), bytes); }

void *xmalloc_aligned64(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) p = NULL;
    return check_alloc(p, bytes ? bytes : 1);
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

void rng_seed(Rng *rng, uint64_t seed)
{
    rng->state = 0;
    rng->inc = (seed << 1) | 1;
    rng_next(rng);
    rng->state += 0x853c49e6748fea9bULL ^ seed;
    rng_next(rng);
}

uint32_t rng_next(Rng *rng)
{
    uint64_t old = rng->state;
    rng->state = old * 6364136223846793005ULL + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

float rng_uniform(Rng *rng) { return (rng_next(rng) >> 8) * (1.0f / 16777216.0f); }

float rng_normal(Rng *rng)
{
    float u1 = rng_uniform(rng), u2 = rng_uniform(rng);
    if (u1 < 1e-12f) u1 = 1e-12f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
}

uint32_t rng_below(Rng *rng, uint32_t n)
{
    /* Lemire-free simple rejection: unbiased and fast enough for shuffles. */
    uint32_t limit = UINT32_MAX - UINT32_MAX % n;
    uint32_t r;
    do r = rng_next(rng); while (r >= limit);
    return r % n;
}

void rng_shuffle(Rng *rng, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(rng, (uint32_t)i + 1);
        int t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int read_whole_file(const char *path, unsigned char **data, size_t *len, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return error_set(err, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return error_set(err, "%s: not a regular file", path);
    }
    *len = (size_t)st.st_size;
    *data = xmalloc(*len);
    size_t got = fread(*data, 1, *len, f);
    fclose(f);
    if (got != *len) {
        free(*data);
        return error_set(err, "%s: read error", path);
    }
    return 0;
}

int file_begins_with(const char *path, const void *head, size_t n)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    char *got = xmalloc(n ? n : 1);
    struct stat st;
    int begins = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, got, n) == (ssize_t)n && !memcmp(got, head, n);
    close(fd);
    free(got);
    return begins;
}

int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The value of "Key:  N kB" in /proc/meminfo, in bytes; -1 if there is none. */
static double meminfo_bytes(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    double kb;
    return at && sscanf(at + strlen(key), " %lf", &kb) == 1 ? kb * 1024 : -1;
}

double memory_limit_bytes(char *what, size_t n)
{
    double limit = 0;
    what[0] = 0;
    char text[4096];
    FILE *f = fopen("/proc/meminfo", "r");
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[got] = 0;
    double ram = meminfo_bytes(text, "MemTotal:"), swap = meminfo_bytes(text, "SwapTotal:");
    if (ram > 0) {
        limit = ram + (swap > 0 ? swap : 0);
        snprintf(what, n, "RAM and swap (/proc/meminfo)");
    }
    /* cgroup v2, as a container sees its own: "max" or a number of bytes. */
    f = fopen("/sys/fs/cgroup/memory.max", "r");
    double cg;
    if (f && fscanf(f, "%lf", &cg) == 1 && cg > 0 && (limit == 0 || cg < limit)) {
        limit = cg;
        snprintf(what, n, "the cgroup's memory.max");
    }
    if (f) fclose(f);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (limit == 0 || (double)rl.rlim_cur < limit)) {
        limit = (double)rl.rlim_cur;
        snprintf(what, n, "ulimit -v %llu", (unsigned long long)(rl.rlim_cur / 1024));
    }
    return limit;
}

/* Edit distance, for "did you mean" suggestions. Short strings only. */
int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

void memory_give_back(void *p, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || bytes == 0) return;
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t hi = ((uintptr_t)p + bytes) / (uintptr_t)page * (uintptr_t)page;
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);  /* advice: a refusal costs memory only */
}
