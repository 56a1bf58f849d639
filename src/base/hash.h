/* hash.h — hashing, and the one hash table that maps keys to small integer ids.
 *
 * FNV-1a (64 bit) is the hash of every byte key in nmt: words, symbols, BPE merges,
 * and the fingerprints a checkpoint stores (trainstate.h), whose values must never
 * change. It continues over several pieces: the hash of a then b is
 * fnv1a(fnv1a(FNV1A_BASIS, a, na), b, nb), equal to the hash of their concatenation.
 * Integer keys are hashed with hash_mix64 instead (a multiply, not one per byte).
 *
 * HashTable maps keys to ids into the caller's own arrays: the caller keeps the keys
 * (words[id], pairs[id], ...), the table only finds the id. Each slot holds an id
 * (-1: empty) and 32 bits of the key's hash, the 64-bit hash folded (high half XOR
 * low half), so that
 *   - a probe compares the caller's key only where the 32 bits agree (almost only
 *     at the key itself), and
 *   - growing rehashes the stored bits: no key is read, no callback made.
 * Linear probing, power-of-two capacity, at most half full (2 * n <= cap), doubled
 * when an add would pass that. Ids are never removed.
 *
 * The caller says whether a stored id holds the key being looked up, with a
 * HashEqual(ctx, id, key): ctx is its container, key whatever it looks up by.
 *
 * Example: strings -> dense ids, in order of first sight
 *   static int same_word(const void *ctx, int id, const void *key)
 *   {
 *       return strcmp(((char *const *)ctx)[id], key) == 0;
 *   }
 *   HashTable t = {0};
 *   uint64_t h = fnv1a(FNV1A_BASIS, w, strlen(w));
 *   int id = hash_find_or_add(&t, h, same_word, words, w, n);
 *   if (id == n) words[n++] = xstrdup(w);      // w was new: id n is its
 *   ...
 *   int got = hash_find(&t, h, same_word, words, w);   // -1 if absent
 *   hash_free(&t);
 *
 * The hash functions and the lookups are inline (at the end of this header):
 * vocab_lookup, word counting and BPE learning spend much of their time in them, and
 * inlined, each caller's HashEqual (a static function named at the call) is inlined
 * into the probe loop, as in a table written for that caller. Growing is in hash.c.
 */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------- */
/* Hash functions                                                             */
/* ------------------------------------------------------------------------- */

#define FNV1A_BASIS 0xcbf29ce484222325ull   /* FNV-1a's offset basis: the hash of no bytes */

/* FNV-1a (64 bit) continued from h over data[0..n). */
static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n);
/* The same over the bytes of a NUL-terminated string: fnv1a(h, s, strlen(s)), in one
 * pass (word lookups would otherwise call strlen first). */
static inline uint64_t fnv1a_str(uint64_t h, const char *s);

/* A 64-bit integer key's hash: every bit of k reaches the bits the table uses. */
static inline uint64_t hash_mix64(uint64_t k);

/* ------------------------------------------------------------------------- */
/* The table                                                                  */
/* ------------------------------------------------------------------------- */

/* 1 if the caller's entry `id` holds `key`. */
typedef int (*HashEqual)(const void *ctx, int id, const void *key);

typedef struct {
    uint32_t hash;   /* the key's 64-bit hash, folded */
    int32_t id;      /* -1: empty */
} HashSlot;

typedef struct {
    HashSlot *slots; /* (cap) */
    int cap;         /* power of two; 0 until the first add or hash_reserve */
    int n;           /* ids stored */
} HashTable;         /* {0} is an empty table */

/* The id stored under hash h whose entry equals key, or -1. */
static inline int hash_find(const HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key);

/* The id of key as hash_find finds it; if there is none, adds `id` under h and
 * returns it (so a result equal to `id` means: added). */
static inline int hash_find_or_add(HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key,
                                   int id);

/* Makes room for n ids in all without growing (a table built from a known list). */
void hash_reserve(HashTable *t, int n);

void hash_free(HashTable *t);   /* back to {0} */

/* ------------------------------------------------------------------------- */
/* The inline code                                                            */
/* ------------------------------------------------------------------------- */

/* One byte of FNV-1a: XOR it in, multiply by FNV's 64-bit prime. */
static inline uint64_t fnv1a_byte(uint64_t h, unsigned char b) { return (h ^ b) * 0x100000001b3ull; }

static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = fnv1a_byte(h, p[i]);
    return h;
}

static inline uint64_t fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = fnv1a_byte(h, (unsigned char)*s);
    return h;
}

/* The first half of murmur3's 64-bit finaliser: the multiply carries every bit
 * upward, the shift brings the high bits down again. */
static inline uint64_t hash_mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    return k ^ k >> 33;
}

/* Doubles the capacity (16 for an empty table), rehashing the stored bits. */
void hash_grow(HashTable *t);

/* The 32 bits a slot keeps. Folding rather than truncating lets the high half of the
 * hash count too, which FNV-1a's low bits need: its multiply only carries upward, so
 * its lowest bits see only the lowest bits of each byte. */
static inline uint32_t hash_fold(uint64_t h) { return (uint32_t)(h ^ h >> 32); }

/* The slot holding key (stored under f), or the empty slot where it would go.
 * t->cap > 0; the table is at most half full, so the loop ends. */
static inline HashSlot *hash_probe(const HashTable *t, uint32_t f, HashEqual equal, const void *ctx, const void *key)
{
    uint32_t mask = (uint32_t)t->cap - 1;
    for (uint32_t i = f & mask;; i = (i + 1) & mask) {
        HashSlot *s = &t->slots[i];
        if (s->id < 0 || (s->hash == f && equal(ctx, s->id, key)))
            return s;
    }
}

static inline int hash_find(const HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key)
{
    if (t->cap == 0)
        return -1;
    return hash_probe(t, hash_fold(h), equal, ctx, key)->id;
}

static inline int hash_find_or_add(HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key,
                                   int id)
{
    if (t->cap == 0)
        hash_grow(t);
    uint32_t f = hash_fold(h);
    HashSlot *s = hash_probe(t, f, equal, ctx, key);
    if (s->id >= 0)
        return s->id;
    *s = (HashSlot){f, id};
    if (2 * ++t->n > t->cap)
        hash_grow(t);
    return id;
}
#endif
