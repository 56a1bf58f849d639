/* fixture.h — reads the tensors that scripts/reference/reference.py writes (format in
 * scripts/reference/fixture.py): "NMTFIX01", int32 count, then per record int32 name length, name,
 * int32 dtype (0 float32, 1 int32), int32 ndim, int32 dims[ndim], data.
 * For tests only: a malformed fixture aborts the test with a message. */
#ifndef FIXTURE_H
#define FIXTURE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[64];
    int dtype, ndim, dims[8];
    long n;
    void *data;
} FixtureTensor;

typedef struct {
    FixtureTensor *t;
    int n;
} Fixture;

static void fixture_die(const char *path, const char *what)
{
    fprintf(stderr, "fixture %s: %s\n", path, what);
    exit(2);
}

static Fixture fixture_load(const char *path)
{
    Fixture f = {0};
    FILE *fp = fopen(path, "rb");
    if (!fp) fixture_die(path, "cannot open (run the test from the repository root)");
    char magic[8];
    int count;
    if (fread(magic, 1, 8, fp) != 8 || memcmp(magic, "NMTFIX01", 8) || fread(&count, 4, 1, fp) != 1 || count < 0 || count > 100000)
        fixture_die(path, "bad header");
    f.t = calloc(count, sizeof *f.t);
    f.n = count;
    for (int i = 0; i < count; i++) {
        FixtureTensor *t = &f.t[i];
        int len;
        if (fread(&len, 4, 1, fp) != 1 || len <= 0 || len >= 64 || fread(t->name, 1, len, fp) != (size_t)len)
            fixture_die(path, "bad record name");
        if (fread(&t->dtype, 4, 1, fp) != 1 || fread(&t->ndim, 4, 1, fp) != 1 || t->ndim < 0 || t->ndim > 8 ||
            fread(t->dims, 4, t->ndim, fp) != (size_t)t->ndim)
            fixture_die(path, "bad record header");
        t->n = 1;
        for (int d = 0; d < t->ndim; d++) t->n *= t->dims[d];
        t->data = malloc(t->n * 4 + 4);
        if (fread(t->data, 4, t->n, fp) != (size_t)t->n) fixture_die(path, "truncated data");
    }
    fclose(fp);
    return f;
}

static FixtureTensor *fixture_get(Fixture *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->t[i].name, name)) return &f->t[i];
    fprintf(stderr, "fixture: no record %s\n", name);
    exit(2);
}

static void fixture_free(Fixture *f)
{
    for (int i = 0; i < f->n; i++) free(f->t[i].data);
    free(f->t);
}
#endif
