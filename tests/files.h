/* files.h — whole-file reading and writing for the tests that damage files on purpose. */
#ifndef FILES_H
#define FILES_H
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* The whole of file p (malloc'd, *len bytes); exits the test on an error. */
static inline unsigned char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f) { perror(p); exit(2); }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*len ? *len : 1);
    if (fread(data, 1, *len, f) != *len) { perror(p); exit(2); }
    fclose(f);
    return data;
}

/* Writes len bytes as the whole of file p; exits the test on an error. */
static inline void spit(const char *p, const void *data, size_t len)
{
    int fd = open(p, O_WRONLY | O_CREAT, 0600);
    if (fd < 0 || pwrite(fd, data, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) != 0 || close(fd) != 0) {
        perror(p);
        exit(2);
    }
}
#endif
