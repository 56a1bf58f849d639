/* test_segment.c — the segmenter beyond BPE (src/text/segment.c): text segmented
 * elsewhere (data.tokenizer none) back into sentences and references, word ends, and
 * SentencePiece models trained, loaded, applied and undone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/segment.h"   // defines: Segmenter, segmenter_detokenize, segmenter_reference, segmenter_word_ends
#include "tokens.h"         // defines: list_is, LIST

/* segmenter_detokenize(s, the units of `units` split at spaces) == want. */
static int detok_is(const Segmenter *s, const char *units, const char *want)
{
    char *copy = strdup(units), *unit[64];
    int n = 0;
    for (char *p = strtok(copy, " "); p && n < 64; p = strtok(NULL, " "))
        unit[n++] = p;
    char *got = segmenter_detokenize(s, unit, n);
    int ok = !strcmp(got, want);
    if (!ok) fprintf(stderr, "  [%s] -> [%s], want [%s]\n", units, got, want);
    free(got);
    free(copy);
    return ok;
}

/* Text segmented elsewhere (data.tokenizer none): the units are the tokens, and the
 * format decides the way back to a sentence, as subword-nmt's sed and spm_decode do. */
static void test_presegmented(void)
{
    Segmenter none = {.kind = TOKENIZER_NONE, .format = SUBWORD_FORMAT_NONE};
    Segmenter at = {.kind = TOKENIZER_NONE, .format = SUBWORD_FORMAT_BPE_AT};
    Segmenter spm = {.kind = TOKENIZER_NONE, .format = SUBWORD_FORMAT_SPM};
    Segmenter word = {.kind = TOKENIZER_WORD}, bpe = {.kind = TOKENIZER_BPE};
    CHECK(detok_is(&none, "low@@ er , \xE2\x96\x81x \" a", "low@@ er , \xE2\x96\x81x \" a"),
          "format none: tokens joined by single spaces, untouched (no detokenizer rules)");
    CHECK(detok_is(&at, "the low@@ er new@@ est .", "the lower newest ."), "bpe_at: \"@@ \" joined back");
    CHECK(detok_is(&at, "a@@ b@@ c d@@", "abc d"), "bpe_at: chains, and a final \"@@\" dropped");
    CHECK(detok_is(&at, "x @@ y a@@@ b email@ me", "x y a@b email@ me"),
          "bpe_at: as sed -r 's/(@@ )|(@@ ?$)//g' (a lone @@, three @, a single @)");
    CHECK(detok_is(&spm, "\xE2\x96\x81the \xE2\x96\x81low er \xE2\x96\x81new est .", "the lower newest."),
          "spm: pieces concatenated, U+2581 a space, none in front");
    CHECK(detok_is(&spm, "\xE2\x96\x81 \xE2\x96\x81\xE2\x96\x81" "a b \xE2\x96\x81", "ab"),
          "spm: runs of U+2581 are one space, none at either end");
    CHECK(detok_is(&spm, "", "") && detok_is(&at, "", "") && detok_is(&none, "", ""), "no units: \"\"");
    CHECK(detok_is(&word, "he said \" hi \" .", "he said \"hi\"."), "word: text_detokenize's rules, as before");
    CHECK(detok_is(&bpe, "low@@ er , new@@ est", "lower, newest"), "bpe: pieces joined, then detokenized");

    /* References segmented as the training data read back as the output does. */
    char *r = segmenter_reference(&at, "  the low@@ er\tnew@@ est .");
    CHECK(!strcmp(r, "the lower newest ."), "segmenter_reference, bpe_at: the reference as a sentence");
    free(r);
    r = segmenter_reference(&spm, "\xE2\x96\x81low er \xE2\x96\x81.");
    CHECK(!strcmp(r, "lower ."), "segmenter_reference, spm: the reference as a sentence");
    free(r);
    r = segmenter_reference(&none, "a  b@@ c");
    CHECK(!strcmp(r, "a  b@@ c"), "segmenter_reference, format none: the line as it is");
    free(r);
    r = segmenter_reference(&bpe, "low@@ er");
    CHECK(!strcmp(r, "low@@ er"), "segmenter_reference, bpe: the line as it is (nmt segmented it, not the data)");
    free(r);
    r = segmenter_reference(&at, "bad \xFF low@@ er");
    CHECK(!strcmp(r, "bad \xFF low@@ er"), "segmenter_reference: a line that is not UTF-8 as it is");
    free(r);

    /* Word ends, for <unk> rates per word. */
    char *u[] = {"low@@", "er", "\xE2\x96\x81new", "est", "."};
    int ends_at[5], ends_spm[5], ends_none[5];
    for (int i = 0; i < 5; i++) {
        ends_at[i] = segmenter_word_ends(&at, u, 5, i);
        ends_spm[i] = segmenter_word_ends(&spm, u, 5, i);
        ends_none[i] = segmenter_word_ends(&none, u, 5, i);
    }
    CHECK(!ends_at[0] && ends_at[1] && ends_at[2] && ends_at[3] && ends_at[4], "word ends, bpe_at: after er, not low@@");
    CHECK(!ends_spm[0] && ends_spm[1] && !ends_spm[2] && !ends_spm[3] && ends_spm[4],
          "word ends, spm: before a piece with U+2581, and at the end");
    CHECK(ends_none[0] && ends_none[1] && ends_none[2] && ends_none[3] && ends_none[4], "word ends, format none: every token");
    CHECK(tokenizer_whitespace_only(TOKENIZER_NONE) && !tokenizer_whitespace_only(TOKENIZER_BPE) &&
              !tokenizer_whitespace_only(TOKENIZER_WORD),
          "text of tokenizer none is split at whitespace only, of the others at punctuation too");
    CHECK(tokenizer_kind("none") == TOKENIZER_NONE && subword_format("bpe_at") == SUBWORD_FORMAT_BPE_AT &&
              subword_format("@@") == -1 && !strcmp(subword_format_name(SUBWORD_FORMAT_SPM), "spm"),
          "names of the tokenizer and the formats");
}

/* SentencePiece through the segmenter: a model trained on a few lines, text to pieces
 * and back, the model's bytes loaded again, and bytes that are no model refused. */
static void test_sentencepiece(void)
{
    static const char *const words[] = {"the", "lower", "newest", "widest", "low", "new", "wide", "cat", "sat"};
    char *lines[200];
    for (int i = 0; i < 200; i++) {
        char line[100];
        snprintf(line, sizeof line, "%s %s %s", words[i % 9], words[(i / 9) % 9], words[(i * 7 + 3) % 9]);
        lines[i] = strdup(line);
    }
    Segmenter s = {.kind = TOKENIZER_SPM};
    Error err = {""};
    int rc = segmenter_learn_spm(&s.spm_src, (const char *const *)lines, 200, "unigram", 40, NULL, &err);
    CHECK(rc == 0 && s.spm_src.spm && s.spm_src.n > 0, "spm: a unigram model trained on 200 lines");
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(segmenter_spm_type(&s.spm_src), "unigram") && spm_piece_count(s.spm_src.spm) <= 40,
          "spm: its type and at most 40 pieces");
    rc = segmenter_load_spm(&s.spm_tgt, s.spm_src.proto, s.spm_src.n, "copy", &err);
    CHECK(rc == 0, "spm: the model's bytes load again");
    char *w[] = {"the", "lowest", "cat"};
    TokenList in = {w, 3}, pieces;
    segmenter_apply(&s, SIDE_SOURCE, &in, &pieces);
    int marked = pieces.n >= 3 && !strncmp(pieces.tokens[0], "\xE2\x96\x81", 3);
    CHECK(marked, "spm: the words' pieces, the first marked with U+2581");
    char *back = segmenter_detokenize(&s, pieces.tokens, pieces.n);
    CHECK(!strcmp(back, "the lowest cat"), "spm: pieces back to the sentence (spm_decode)");
    free(back);
    for (int i = 0; i + 1 < pieces.n; i++)
        CHECK(segmenter_word_ends(&s, pieces.tokens, pieces.n, i) == !strncmp(pieces.tokens[i + 1], "\xE2\x96\x81", 3),
              "spm: a word ends before a piece marked with U+2581");
    TokenList joined;
    segmenter_join(&s, pieces.tokens, pieces.n, &joined);
    CHECK(list_is(&joined, LIST("the", "lowest", "cat")), "spm: segmenter_join gives the words");
    token_list_free(&joined);
    token_list_free(&pieces);
    /* A piece the target model does not know (a source piece --replace-unk copied)
     * reads as the others do; the model's own <unk> as SentencePiece writes it. */
    char *odd[] = {"\xE2\x96\x81the", "\xE2\x96\x81zebra\xE2\x96\x81x", "<unk>", "\xE2\x96\x81" "cat"};
    back = segmenter_detokenize(&s, odd, 4);
    CHECK(!strcmp(back, "the zebra x \xE2\x81\x87 cat"), "spm: unknown pieces read as pieces, <unk> as U+2047");
    if (strcmp(back, "the zebra x \xE2\x81\x87 cat")) fprintf(stderr, "  got [%s]\n", back);
    free(back);
    segmenter_free(&s);
    CHECK(!s.spm_src.spm && !s.spm_tgt.proto, "spm: segmenter_free frees both models");

    SpmModel m;
    rc = segmenter_load_spm(&m, "garbage", 7, "x.model", &err);
    CHECK(rc == -1 && !m.spm && !strncmp(err.msg, "x.model: not a SentencePiece model (", 36),
          "spm: bytes that are no model are refused, naming them");
    rc = segmenter_learn_spm(&m, (const char *const *)lines, 200, "bpe", 5, NULL, &err);
    CHECK(rc == -1 && strstr(err.msg, "SentencePiece could not train a bpe model of 5 pieces: "),
          "spm: too few pieces for the characters is an error with the library's reason");
    for (int i = 0; i < 200; i++)
        free(lines[i]);
}

int main(void)
{
    test_presegmented();
    test_sentencepiece();
    return check_report("test_segment");
}
