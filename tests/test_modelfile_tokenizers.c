/* test_modelfile_tokenizers.c — the sections of a model file that carry its tokenizer
 * and its protected symbols (src/files/modelfile.c): SUBW for bpe, char, spm and none,
 * USYM for data.user_symbols. Each reads back exactly, models that differ in them are
 * not compatible, and damage to them is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modelfile_checks.h"  /* defines: make_model_file, check_same, expect_refused, sections_of, fix_crc, flip_every_byte, path, bad */

/* A model with subword units: the SUBW section carries the tokenizer and both sides'
 * merges; it reads back exactly, and any damage to it is refused. */
static void test_subword_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_BPE;
    const char *src_codes = "#version: 0.2\ne s\nes t</w>\nl o\nघ र</w>\n", *tgt_codes = "#version: 0.2\nc a\nca f\n";
    int ok = bpe_from_text(&mf.seg.src, src_codes, strlen(src_codes), "src", &err) == 0 &&
             bpe_from_text(&mf.seg.tgt, tgt_codes, strlen(tgt_codes), "tgt", &err) == 0;
    if (!ok) { fprintf(stderr, "bpe_from_text: %s\n", err.msg); exit(2); }
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a bpe model");
    if (rc == 0) {
        check_same(&mf, &back, "bpe model");
        char *a = bpe_to_text(&back.seg.src), *b = bpe_to_text(&back.seg.tgt);
        CHECK(back.seg.kind == TOKENIZER_BPE && back.seg.joint == 0, "bpe model: tokenizer kind and joint flag");
        CHECK(back.seg.src.n == 4 && back.seg.tgt.n == 2 && !strcmp(a, src_codes) && !strcmp(b, tgt_codes),
              "bpe model: both sides' merges, in order");
        free(a);
        free(b);
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    flip_every_byte(good, len, 0, "bpe model");

    /* Damage behind a valid CRC: a word kind in SUBW, a broken merge line. */
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL, "bpe model: has a SUBW section");
    if (subw) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        int64_t kind = TOKENIZER_WORD;
        memcpy(d + subw->payload, &kind, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field kind is 0, must be 1..", "SUBW with the word kind");
        kind = 99;
        memcpy(d + subw->payload, &kind, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field kind is 99, must be 1..", "SUBW with a kind past the last one known");
        expect_refused(bad, "a tokenizer of a newer nmt, or a damaged file", "... said to be a newer nmt's tokenizer");
        memcpy(d, good, len);
        unsigned char *space = memchr(d + subw->payload + 24 + 14, ' ', 8);  /* in "e s", the first merge */
        if (space) *space = 'x';
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "source merges:2: expected two symbols", "SUBW with a merge that is not two symbols");
        free(d);
    }
    free(good);
    mf.seg.kind = TOKENIZER_CHAR;
    bpe_free(&mf.seg.src);
    bpe_free(&mf.seg.tgt);
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.seg.kind == TOKENIZER_CHAR && back.seg.src.n == 0, "write/read a char model");
    if (rc == 0) modelfile_free(&back);
    free_made(&mf);
}

/* Tokenizer spm: SUBW holds both sides' SentencePiece models as .model files hold
 * them; each is loaded when the file is read, so a damaged one is refused there,
 * naming its side. */
static void test_sentencepiece_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_SPM;
    mf.text.whitespace_only = 1;
    char *lines[60];
    for (int i = 0; i < 60; i++) {
        char line[64];
        snprintf(line, sizeof line, "the %s sat on the %s", i % 3 ? "cat" : "dog", i % 5 ? "mat" : "log");
        lines[i] = strdup(line);
    }
    int rc = segmenter_learn_spm(&mf.seg.spm_src, (const char *const *)lines, 60, "bpe", 30, NULL, &err) ||
             segmenter_learn_spm(&mf.seg.spm_tgt, (const char *const *)lines, 30, "unigram", 25, NULL, &err);
    for (int i = 0; i < 60; i++)
        free(lines[i]);
    if (rc) { fprintf(stderr, "segmenter_learn_spm: %s\n", err.msg); exit(2); }
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model of tokenizer spm");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "tokenizer spm");
        CHECK(back.seg.kind == TOKENIZER_SPM && back.text.whitespace_only && back.seg.spm_src.spm && back.seg.spm_tgt.spm,
              "tokenizer spm: the kind, text split at whitespace only, both models loaded");
        CHECK(back.seg.spm_src.n == mf.seg.spm_src.n && !memcmp(back.seg.spm_src.proto, mf.seg.spm_src.proto, mf.seg.spm_src.n) &&
                  back.seg.spm_tgt.n == mf.seg.spm_tgt.n &&
                  !memcmp(back.seg.spm_tgt.proto, mf.seg.spm_tgt.proto, mf.seg.spm_tgt.n),
              "tokenizer spm: both models' bytes as written");
        CHECK(!strcmp(segmenter_spm_type(&back.seg.spm_src), "bpe") && !strcmp(segmenter_spm_type(&back.seg.spm_tgt), "unigram"),
              "tokenizer spm: each side's model type");
        char msg[200];
        CHECK(modelfile_compatible(&mf, &back, 1, msg, sizeof msg) == 0, "tokenizer spm: compatible with itself");
        SpmModel other = back.seg.spm_tgt;
        back.seg.spm_tgt = back.seg.spm_src;
        CHECK(modelfile_compatible(&mf, &back, 0, msg, sizeof msg) == 1 && !strcmp(msg, "their SentencePiece models differ"),
              "tokenizer spm: other SentencePiece models are not compatible");
        back.seg.spm_tgt = other;
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL && subw->len == 16 + 8 + mf.seg.spm_src.n + 8 + mf.seg.spm_tgt.n,
          "tokenizer spm: SUBW is kind, joint and the two models with their lengths");
    if (subw) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        memset(d + subw->payload + 24, 0xFF, 8);  /* the source model's first bytes */
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: source SentencePiece model: not a SentencePiece model (",
                       "tokenizer spm: a damaged source model is refused, naming it");
        memcpy(d, good, len);
        uint64_t huge = (uint64_t)1 << 40;
        memcpy(d + subw->payload + 16, &huge, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: SentencePiece models run past the section end",
                       "tokenizer spm: a model length past the section's end");
        free(d);
    }
    free(good);
    free_made(&mf);
}

/* Tokenizer none (text segmented elsewhere): SUBW holds its head and the subword
 * format, no merges; the reader splits text at whitespace only, which the file does
 * not store but the kind implies, so a writer that says otherwise is refused. */
static void test_tokenizer_none(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_NONE;
    mf.seg.format = SUBWORD_FORMAT_BPE_AT;
    int rc = modelfile_write(path, &mf, &err);
    CHECK(rc == -1 && strstr(err.msg, "not written: text split at whitespace and punctuation, but tokenizer none"),
          "tokenizer none with text options that split at punctuation: not written");
    mf.text.whitespace_only = 1;
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model of tokenizer none");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "tokenizer none");
        CHECK(back.seg.kind == TOKENIZER_NONE && back.seg.format == SUBWORD_FORMAT_BPE_AT && back.text.whitespace_only,
              "tokenizer none: kind, subword format, and text split at whitespace only");
        char msg[200];
        CHECK(modelfile_compatible(&mf, &back, 1, msg, sizeof msg) == 0, "tokenizer none: compatible with itself");
        back.seg.format = SUBWORD_FORMAT_SPM;
        CHECK(modelfile_compatible(&mf, &back, 0, msg, sizeof msg) == 1 && !strcmp(msg, "format: 1 and 2"),
              "tokenizer none: another subword format is not compatible, named");
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL && subw->len == 24, "tokenizer none: SUBW is kind, joint and format (24 bytes)");
    if (subw && subw->len == 24) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        int64_t format = 3;
        memcpy(d + subw->payload + 16, &format, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field format is 3, must be 0..2", "tokenizer none: a format out of range");
        free(d);
    }
    flip_every_byte(good, len, 0, "tokenizer none");
    free(good);
    free_made(&mf);
}

/* Protected symbols (data.user_symbols) travel in USYM, as given, and come back
 * normalised with the file's text options, text and segmenter pointing at them; a file
 * without symbols has no USYM (as every file before them) and reads with none; damage
 * behind a valid CRC is refused naming the section. */
static void test_symbols_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.symbols.n == 0 && back.text.symbols == NULL && back.seg.symbols == NULL,
          "a file without symbols reads with none");
    size_t len;
    unsigned char *plain = slurp(path, &len);
    Where w[12];
    int n = sections_of(plain, len, w, 12), has_usym = 0;
    for (int i = 0; i < n; i++)
        has_usym |= !strcmp(w[i].tag, "USYM");
    CHECK(n > 0 && !has_usym, "a file without symbols has no USYM section (as files before them)");
    free(plain);
    if (rc == 0) modelfile_free(&back);

    char *given[] = {"<2da>", "{NAME}", "<2dB>"};
    mf.text.lowercase = 1;
    rc = modelfile_set_symbols(&mf, given, 3, &err);
    CHECK(rc == 0 && mf.text.symbols == &mf.symbols && mf.seg.symbols == &mf.symbols, "symbols set and pointed at");
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model with symbols");
    if (rc) fprintf(stderr, "     %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "model with symbols");
        CHECK(back.symbols.n == 3 && !strcmp(back.symbols.given[0], "<2da>") &&
                  !strcmp(back.symbols.given[1], "{NAME}") && !strcmp(back.symbols.given[2], "<2dB>"),
              "symbols read back as given, in order");
        CHECK(!strcmp(back.symbols.norm[1], "{name}"), "... and normalised with the file's text options (lowercase)");
        CHECK(back.text.symbols == &back.symbols && back.seg.symbols == &back.symbols,
              "the text options and the segmenter of the file read point at its symbols");
        TokenList t;
        rc = text_tokenize("<2DA>Hi {Name}!", 15, &back.text, &t, &err);
        CHECK(rc == 0 && t.n == 4 && !strcmp(t.tokens[0], "<2da>") && !strcmp(t.tokens[2], "{name}"),
              "the file's text options keep its symbols whole");
        token_list_free(&t);
        char msg[200];
        ModelFile other;
        make_model_file(&other, 0);
        other.text.lowercase = 1;
        CHECK(modelfile_compatible(&back, &other, 1, msg, sizeof msg) && strstr(msg, "protected symbols"),
              "a model without the symbols is not compatible: what differs is named");
        free_made(&other);
        modelfile_free(&back);
    }
    unsigned char *good = slurp(path, &len);
    flip_every_byte(good, len, 0, "model with symbols");
    n = sections_of(good, len, w, 12);
    const Where *usym = section(w, n, "USYM");
    CHECK(usym != NULL && usym->len == 4 + 3 * 4 + 5 + 6 + 5, "USYM: count, then length and bytes per symbol");
    if (usym) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        d[usym->payload + 8 + 2] = ' ';  /* "<2 a>" */
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: symbol 1: \"<2 a>\" holds whitespace", "USYM with a symbol nmt would refuse");
        memcpy(d, good, len);
        uint32_t many = 1u << 30;
        memcpy(d + usym->payload, &many, 4);
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: bad symbol count", "USYM with a count past its bytes");
        memcpy(d, good, len);
        memcpy(d + usym->payload + 4 + (4 + 5) + (4 + 6) + 4, "<2da>", 5);  /* symbol 3 spells symbol 1 */
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: symbol 3: \"<2da>\" is given twice", "USYM with a symbol twice");
        free(d);
    }
    free(good);
    free_made(&mf);
}

int main(void)
{
    modelfile_checks_begin("nmt_test_modelfile_tokenizers");
    test_subword_section();
    test_tokenizer_none();
    test_sentencepiece_section();
    test_symbols_section();
    modelfile_checks_end();
    return check_report("test_modelfile_tokenizers");
}
