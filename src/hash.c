/* hash.c — FNV-1a, hash_mix64 and the id table; see hash.h. */
#include "hash.h"

#include <stdlib.h>

#include "util.h"   // defines: xmalloc

#define MIN_CAP 16

/* ------------------------------------------------------------------------- */
/* Hash functions                                                             */
/* ------------------------------------------------------------------------- */

uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;   /* FNV's 64-bit prime */
    }
    return h;
}

/* The first half of murmur3's 64-bit finaliser: the multiply carries every bit
 * upward, the shifts bring the high bits down again. */
uint64_t hash_mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* ------------------------------------------------------------------------- */
/* The table                                                                  */
/* ------------------------------------------------------------------------- */

/* The 32 bits a slot keeps: folding rather than truncating lets the high half of
 * the hash count too, which FNV-1a's low bits need (its multiply only carries up,
 * so its lowest bits see only the lowest bits of each byte). */
static uint32_t fold(uint64_t h) { return (uint32_t)(h ^ h >> 32); }

/* The slot holding key (stored under f), or the empty slot where it would go.
 * t->cap > 0; the table is at most half full, so the loop ends. */
static HashSlot *probe(const HashTable *t, uint32_t f, HashEqual equal, const void *ctx, const void *key)
{
    uint32_t mask = (uint32_t)t->cap - 1;
    for (uint32_t i = f & mask;; i = (i + 1) & mask) {
        HashSlot *s = &t->slots[i];
        if (s->id < 0 || (s->hash == f && equal(ctx, s->id, key)))
            return s;
    }
}

/* Moves every stored id into a new array of cap slots (a power of two > 2 * t->n),
 * placed by the hash bits its slot kept. */
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

int hash_find(const HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key)
{
    if (t->cap == 0)
        return -1;
    return probe(t, fold(h), equal, ctx, key)->id;
}

int hash_find_or_add(HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key, int id)
{
    if (t->cap == 0)
        rehash(t, MIN_CAP);
    uint32_t f = fold(h);
    HashSlot *s = probe(t, f, equal, ctx, key);
    if (s->id >= 0)
        return s->id;
    *s = (HashSlot){f, id};
    if (2 * ++t->n > t->cap)
        rehash(t, 2 * t->cap);
    return id;
}

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
