/* hash.c — growing and freeing the id table; the hash functions and the lookups are
 * inline in hash.h. */
#include "base/hash.h"

#include <stdlib.h>

#include "base/util.h"   // defines: xmalloc

#define MIN_CAP 16

/* Moves every stored id into a new array of cap slots (a power of two > 2 * t->n),
 * placed by the hash bits its slot kept: no key is read again. */
static void rehash(HashTable *t, int cap)
{
    HashSlot *old = t->slots;
    int old_cap = t->cap;
    t->slots = xmalloc((size_t)cap * sizeof *t->slots);
    t->cap = cap;
    for (int i = 0; i < cap; i++)
        t->slots[i] = (HashSlot){0, -1};
    uint32_t mask = (uint32_t)cap - 1;
    for (int i = 0; i < old_cap; i++) {
        if (old[i].id < 0)
            continue;
        uint32_t j = old[i].hash & mask;
        while (t->slots[j].id >= 0)
            j = (j + 1) & mask;
        t->slots[j] = old[i];
    }
    free(old);
}

void hash_grow(HashTable *t) { rehash(t, t->cap ? 2 * t->cap : MIN_CAP); }

void hash_reserve(HashTable *t, int n)
{
    long cap = t->cap ? t->cap : MIN_CAP;
    while (cap < 2 * (long)n)
        cap *= 2;
    if (cap != t->cap)
        rehash(t, (int)cap);
}

void hash_free(HashTable *t)
{
    free(t->slots);
    *t = (HashTable){0};
}
