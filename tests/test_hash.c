/* test_hash.c — FNV-1a, hash_mix64 and the id table (src/base/hash.c).
 *
 * FNV-1a must give the published test vectors and continue over pieces; the
 * checkpoint fingerprints built on it must keep the values the code before hash.c
 * computed (a checkpoint stores them and a resume compares them). The table must find
 * every id it was given among many keys, through growth and through keys whose hashes
 * collide in every bit, and must not ask the caller to compare keys whose stored hash
 * bits differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/hash.h"       // defines: fnv1a, fnv1a_str, FNV1A_BASIS, hash_mix64, HashTable, hash_find, hash_find_or_add
#include "files/trainstate.h" // defines: examples_fingerprint, floats_fingerprint
#include "base/util.h"       // defines: xmalloc

static void test_fnv1a(void)
{
    CHECK(fnv1a(FNV1A_BASIS, "", 0) == 0xcbf29ce484222325ull, "FNV-1a(\"\") is the offset basis");
    CHECK(fnv1a(FNV1A_BASIS, "a", 1) == 0xaf63dc4c8601ec8cull, "FNV-1a(\"a\")");
    CHECK(fnv1a(FNV1A_BASIS, "foobar", 6) == 0x85944171f73967e8ull, "FNV-1a(\"foobar\")");
    CHECK(fnv1a(fnv1a(FNV1A_BASIS, "foo", 3), "bar", 3) == fnv1a(FNV1A_BASIS, "foobar", 6),
          "continued over pieces: the hash of the concatenation");
    CHECK(fnv1a_str(FNV1A_BASIS, "foobar") == 0x85944171f73967e8ull && fnv1a_str(FNV1A_BASIS, "") == FNV1A_BASIS &&
              fnv1a_str(fnv1a(FNV1A_BASIS, "foo", 3), "bar") == 0x85944171f73967e8ull,
          "fnv1a_str: the same hash as fnv1a over the string's bytes");
}

/* Values computed by trainstate.c's own FNV-1a before it used hash.c (commit ec0d794):
 * checkpoints written then hold them. */
static void test_pinned_fingerprints(void)
{
    int s0[] = {4, 17, 9}, t0[] = {5, 6}, s1[] = {1000000}, t1[] = {7, 8, 9, 10};
    Example ex[2] = {{s0, t0, 3, 2}, {s1, t1, 1, 4}};
    float w[] = {1.0f, -2.5f, 0.0f, 3.14159f};
    CHECK(examples_fingerprint(ex, 2) == 0x8ccd4413626abd03ull, "examples_fingerprint: the value checkpoints hold");
    CHECK(floats_fingerprint(w, 4) == 0xde3c862a1e3aac9cull, "floats_fingerprint: the value checkpoints hold");
    CHECK(examples_fingerprint(ex, 0) == FNV1A_BASIS, "no examples: the offset basis");
}

/* Keys are strings in an array ("PREFIX0", "PREFIX1", ...); the context counts the
 * comparisons made. */
typedef struct {
    char **key;
    int n;
    long compares;
} Keys;

static Keys keys_make(const char *prefix, int n)
{
    Keys k = {xmalloc((size_t)n * sizeof(char *)), n, 0};
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        k.key[i] = xstrdup(buf);
    }
    return k;
}

static void keys_free(Keys *k)
{
    for (int i = 0; i < k->n; i++)
        free(k->key[i]);
    free(k->key);
}

static int same_key(const void *ctx, int id, const void *key)
{
    Keys *k = (Keys *)ctx;
    k->compares++;
    return strcmp(k->key[id], key) == 0;
}

static uint64_t hash_str(const char *s) { return fnv1a(FNV1A_BASIS, s, strlen(s)); }

static int table_sound(const HashTable *t)
{
    return t->cap > 0 && (t->cap & (t->cap - 1)) == 0 && 2 * t->n <= t->cap;
}

/* 50000 keys through many doublings: ids as given, found again, absent keys not. */
static void test_many_keys(void)
{
    enum { N = 50000 };
    Keys k = keys_make("key", N), absent = keys_make("absent", 1000);
    HashTable t = {0};
    CHECK(hash_find(&t, hash_str("x"), same_key, &k, "x") == -1 && t.cap == 0, "an empty table finds nothing");
    int ok = 1, sound = 1;
    for (int i = 0; i < N; i++) {
        ok &= hash_find_or_add(&t, hash_str(k.key[i]), same_key, &k, k.key[i], i) == i;
        sound &= table_sound(&t) && t.n == i + 1;
    }
    CHECK(ok, "each new key gets the id offered");
    CHECK(sound, "capacity a power of two, at most half full, after every add");
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hash_find_or_add(&t, hash_str(k.key[i]), same_key, &k, k.key[i], N + i) == i;
    CHECK(ok && t.n == N, "a key added again keeps its first id; nothing added");
    k.compares = 0;
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hash_find(&t, hash_str(k.key[i]), same_key, &k, k.key[i]) == i;
    CHECK(ok, "every key found at its id after growing");
    printf("  %ld comparisons for %d finds\n", k.compares, N);
    /* 50000 keys share a 32-bit hash by chance about 0.3 times; comparing at every
     * probe (linear probing, under 40% full) would cost about 1.3 N. */
    CHECK(k.compares >= N && k.compares <= N + N / 1000,
          "keys compared only where the stored hash bits agree: about once per find");
    ok = 1;
    for (int i = 0; i < absent.n; i++)
        ok &= hash_find(&t, hash_str(absent.key[i]), same_key, &k, absent.key[i]) == -1;
    CHECK(ok, "absent keys: -1");
    hash_free(&t);
    CHECK(t.slots == NULL && t.cap == 0 && t.n == 0, "hash_free leaves an empty table");
    keys_free(&k);
    keys_free(&absent);
}

/* Adds key i of k under hash[i] as id i, then finds each: 1 if every id came back. */
static int add_then_find(HashTable *t, Keys *k, const uint64_t *hash)
{
    int ok = 1;
    for (int i = 0; i < k->n; i++)
        ok &= hash_find_or_add(t, hash[i], same_key, k, k->key[i], i) == i;
    for (int i = 0; i < k->n; i++)
        ok &= hash_find(t, hash[i], same_key, k, k->key[i]) == i;
    return ok;
}

/* Every key under one hash, then hashes that start every probe at the same slot:
 * the caller's comparison and the probing must tell the keys apart. */
static void test_collisions(void)
{
    enum { N = 300 };
    Keys k = keys_make("c", N);
    uint64_t one[N], high[N];
    for (int i = 0; i < N; i++) {
        one[i] = 42;
        /* Zero in the low 32 bits; folded, i << 20, which differs from key to key but
         * not in the 10 bits a table of 1024 slots indexes by. */
        high[i] = (uint64_t)i << 52;
    }
    HashTable t = {0};
    CHECK(add_then_find(&t, &k, one) && t.n == N && table_sound(&t),
          "300 keys under one hash: each its own id, each found");
    CHECK(hash_find(&t, 42, same_key, &k, "c300") == -1 && hash_find(&t, 43, same_key, &k, "c0") == -1,
          "one hash, absent key; present key under another hash: -1");
    hash_free(&t);
    CHECK(add_then_find(&t, &k, high) && t.n == N && t.cap == 1024, "hashes apart only in their high bits: each found");
    hash_free(&t);
    keys_free(&k);
}

/* hash_reserve: room for n ids, so n adds do not move the slots. */
static void test_reserve(void)
{
    enum { N = 1000 };
    Keys k = keys_make("r", N);
    HashTable t = {0};
    hash_reserve(&t, N);
    HashSlot *slots = t.slots;
    CHECK(table_sound(&t) && t.cap >= 2 * N && t.n == 0, "reserved: at least 2n slots, none used");
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= hash_find_or_add(&t, hash_str(k.key[i]), same_key, &k, k.key[i], i) == i;
    CHECK(ok && t.slots == slots, "n adds after reserving n: no growth");
    hash_reserve(&t, 10);
    CHECK(t.slots == slots, "reserving less than there is room for: nothing moves");
    hash_free(&t);
    keys_free(&k);
}

/* Pair keys (left << 32 | right) that differ only in left must still spread over the
 * low bits the table indexes by: the table folds the mixed key to 32 bits. */
static void test_mix64(void)
{
    int seen[256] = {0}, distinct = 0;
    for (uint64_t left = 0; left < 256; left++) {
        uint64_t h = hash_mix64(left << 32 | 7);
        uint32_t folded = (uint32_t)(h ^ h >> 32);
        distinct += !seen[folded & 255]++;
    }
    printf("  %d of 256 low bytes distinct\n", distinct);
    CHECK(distinct > 128, "keys apart in the high half: the low byte of the folded hash spreads");
}

int main(void)
{
    test_fnv1a();
    test_pinned_fingerprints();
    test_many_keys();
    test_collisions();
    test_reserve();
    test_mix64();
    return check_report("hash");
}
