/* util.h — the small things every part of nmt uses: error messages with context,
 * checked allocation, and a seeded random number generator.
 *
 * Errors: library functions return 0 on success and -1 on failure, writing a
 * one-line message (no "nmt: " prefix, no newline) into an Error. Only main.c
 * prints it and decides the exit code.
 */
#ifndef UTIL_H
#define UTIL_H
#include <stddef.h>
#include <stdint.h>

/* The first 8 bytes of every model file (files/modelfile.h): here so that the line
 * reader (io/lines.h) can refuse a model file given where text is read. */
#define MODELFILE_MAGIC "NMTMODEL"

#define ERROR_LEN 512
typedef struct {
    char msg[ERROR_LEN];
} Error;

/* printf-style; always returns -1 so that `return error_set(err, ...)` reads well. A
 * message longer than ERROR_LEN - 1 bytes keeps its end, where the reason is: its
 * longest space-free runs (paths) are cut in the middle to "..." until it fits
 * (error_shorten). An argument may be err->msg itself. */
int error_set(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shortens s (len bytes, NUL-terminated) to at most cap bytes: the longest run without
 * a space, then the next, each cut in the middle to "..." (keeping at least 24 bytes of
 * it, and whole UTF-8 characters), and if that is not enough, the end cut off. Returns
 * the new length. */
size_t error_shorten(char *s, size_t len, size_t cap);

/* malloc/calloc/realloc that abort with a message on exhaustion: running out of
 * memory is not an input error the program can report usefully. */
void *xmalloc(size_t bytes);
void *xcalloc(size_t count, size_t bytes);
void *xrealloc(void *p, size_t bytes);
/* bytes of memory aligned to 64 bytes (a cache line, an AVX-512 vector), for free. */
void *xmalloc_aligned64(size_t bytes);
/* Gives the whole pages within [p, p + bytes) of an allocation back to the system: the
 * memory stays allocated (free it as before), but costs nothing until written again,
 * and those pages read as zeros from then on (Linux's MADV_DONTNEED; elsewhere, or if
 * refused, nothing changes). For memory the caller will never read again. */
void memory_give_back(void *p, size_t bytes);
char *xstrdup(const char *s);

/* PCG32 (O'Neill): small, fast, and reproducible across platforms. */
typedef struct {
    uint64_t state, inc;
} Rng;
void rng_seed(Rng *rng, uint64_t seed);
uint32_t rng_next(Rng *rng);
float rng_uniform(Rng *rng);                /* [0, 1) */
float rng_normal(Rng *rng);                 /* N(0, 1), Box-Muller */
uint32_t rng_below(Rng *rng, uint32_t n);   /* uniform in [0, n) */
void rng_shuffle(Rng *rng, int *a, int n);  /* Fisher-Yates */

double now_seconds(void);                   /* monotonic clock */

/* The whole of a regular file (malloc'd, *len bytes, no NUL added); -1 with the path
 * and the reason in err (missing, not a regular file, read error). */
int read_whole_file(const char *path, unsigned char **data, size_t *len, Error *err);
/* 1 if paths a and b name the same existing file or directory (device and inode). */
int same_file(const char *a, const char *b);
/* 1 if path is a regular file (a symbolic link is not followed: 0) whose first n bytes
 * are head's: a file of a kind that says what it is at its start. */
int file_begins_with(const char *path, const void *head, size_t n);

/* The most memory this process can have, in bytes, as far as this machine says: the
 * smallest of RAM plus swap (/proc/meminfo), the cgroup's memory.max and the address-
 * space limit (RLIMIT_AS, ulimit -v); which one it is, with its figure, in what[n]
 * ("RAM and swap (/proc/meminfo)", "ulimit -v 4000000"). 0 when none is known. */
double memory_limit_bytes(char *what, size_t n);
/* The Levenshtein distance between a and b (insertions, deletions, substitutions),
 * for "did you mean" suggestions; 99 when either is longer than 63 bytes. */
int edit_distance(const char *a, const char *b);

#endif
