/* files.h — whole-file reading and writing for the tests that damage files on purpose,
 * and the count of temporary files a directory holds. */
#ifndef FILES_H
#define FILES_H
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Writes len bytes as the whole of file p; exits the test on an error. It writes in place
 * and then sets the length, rather than truncating to zero first: ext4 flushes a file to
 * disk when it is truncated to zero and rewritten, which would make the thousands of
 * damaged copies of tests/test_modelfile_damage.c take seconds. */
static inline void spit(const char *p, const void *data, size_t len)
{
    int fd = open(p, O_WRONLY | O_CREAT, 0600);
    if (fd < 0 || pwrite(fd, data, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) != 0 || close(fd) != 0) {
        perror(p);
        exit(2);
    }
}
/* How many entries of directory d have ".tmp" in their name: checkpoint.bin.tmp and
 * the temporary files of src/io/outfile.h (NAME.tmp-XXXXXX), which a write must not leave. */
static inline int count_temporaries(const char *d)
{
    DIR *dd = opendir(d);
    int n = 0;
    for (struct dirent *e; dd && (e = readdir(dd)) != NULL;)
        n += strstr(e->d_name, ".tmp") != NULL;
    if (dd) closedir(dd);
    return n;
}
#endif
