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
uint64_t fnv1a(uint64_t h, const void *data, size_t n);

/* A 64-bit integer key's hash: every bit of k reaches the bits the table uses. */
uint64_t hash_mix64(uint64_t k);

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
int hash_find(const HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key);

/* The id of key as hash_find finds it; if there is none, adds `id` under h and
 * returns it (so a result equal to `id` means: added). */
int hash_find_or_add(HashTable *t, uint64_t h, HashEqual equal, const void *ctx, const void *key, int id);

/* Makes room for n ids in all without growing (a table built from a known list). */
void hash_reserve(HashTable *t, int n);

void hash_free(HashTable *t);   /* back to {0} */
#endif
