/* seed_modelfile.c — writes the modelfile fuzz target's seeds: tiny but complete model
 * and checkpoint files of the current format (a few hundred bytes to 2 KB each).
 *
 *   build/fuzz/seed_modelfile DIR    writes DIR/model.bin, checkpoint.bin, family.bin,
 *                                    luong.bin, no_arch.bin, bpe.bin, char.bin, none.bin,
 *                                    spm.bin and int8.bin (int8 weights, nmt quantize's)
 *
 * `make fuzz` runs it before every fuzzing session, so the fuzzer always starts from
 * files the current modelfile_write makes (even after a format change); the copies in
 * tests/fuzz/corpus/modelfile/ were made by it too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/modelfile.h" /* defines: ModelFile, modelfile_write, modelfile_free */

static const char *src_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "go", "run"};
static const char *tgt_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "जा"};

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "seed_modelfile: %s: %s\n", what, msg);
    exit(1);
}

/* A model of dimensions d with deterministic weights; Adam state when with_adam. */
static void write_model_as(const char *path, ModelDims d, int with_adam, TokenizerKind tokenizer, int int8)
{
    ModelFile mf;
    Error err;
    memset(&mf, 0, sizeof mf);
    d.src_vocab = (int)(sizeof src_words / sizeof *src_words);
    d.tgt_vocab = (int)(sizeof tgt_words / sizeof *tgt_words);
    if (vocab_from_words(&mf.src_vocab, (char *const *)src_words, d.src_vocab, &err) ||
        vocab_from_words(&mf.tgt_vocab, (char *const *)tgt_words, d.tgt_vocab, &err))
        die(path, err.msg);
    model_alloc(&mf.model, &d);
    model_init_weights(&mf.model, 1);
    mf.text.lowercase = 1;
    mf.config_json = xstrdup("{\"data\": {\"train\": \"t.tsv\"}}");
    mf.step = 3;
    mf.epoch = 1;
    mf.seg.kind = tokenizer;
    mf.text.whitespace_only = tokenizer_whitespace_only(tokenizer);
    if (tokenizer == TOKENIZER_NONE) mf.seg.format = SUBWORD_FORMAT_BPE_AT;
    if (tokenizer == TOKENIZER_SPM) {
        const char *lines[] = {"go run", "run go", "we run", "go we", "ran"};
        if (segmenter_learn_spm(&mf.seg.spm_src, lines, 5, "bpe", 12, NULL, &err) ||
            segmenter_load_spm(&mf.seg.spm_tgt, mf.seg.spm_src.proto, mf.seg.spm_src.n, "seed", &err))
            die(path, err.msg);
    }
    if (tokenizer == TOKENIZER_BPE) {
        const char *codes = "#version: 0.2\ng o</w>\nr u\nru n</w>\n";
        if (bpe_from_text(&mf.seg.src, codes, strlen(codes), "seed", &err) ||
            bpe_from_text(&mf.seg.tgt, codes, strlen(codes), "seed", &err))
            die(path, err.msg);
    }
    if (with_adam) {
        mf.has_optimizer = 1;
        adam_init(&mf.opt, mf.model.n_params, 0.001f);
        mf.opt.step = 3;
        for (long i = 0; i < mf.model.n_params; i++) {
            mf.opt.m[i] = 0.01f * (float)(i % 7);
            mf.opt.v[i] = 0.001f * (float)(i % 5);
        }
    }
    mf.weights_int8 = int8;
    if (modelfile_write(path, &mf, &err)) die(path, err.msg);
    modelfile_free(&mf);
}

static void write_model(const char *path, ModelDims d, int with_adam, TokenizerKind tokenizer)
{
    write_model_as(path, d, with_adam, tokenizer, 0);
}

/* A copy of `from` without its ARCH section: a file as written before the model family. */
static void drop_arch(const char *from, const char *to)
{
    FILE *f = fopen(from, "rb");
    if (!f) die(from, "cannot read");
    unsigned char d[1 << 16];
    size_t len = fread(d, 1, sizeof d, f);
    fclose(f);
    uint32_t count;
    memcpy(&count, d + 16, 4);
    unsigned char out[1 << 16];
    size_t at = 20, n = 20;
    memcpy(out, d, 20);
    for (uint32_t i = 0; i < count && at + 16 <= len; i++) {
        uint64_t sl;
        memcpy(&sl, d + at + 4, 8);
        if (memcmp(d + at, "ARCH", 4)) {
            memcpy(out + n, d + at, 16 + sl);
            n += 16 + sl;
        }
        at += 16 + sl;
    }
    count--;
    memcpy(out + 16, &count, 4);
    f = fopen(to, "wb");
    if (!f || fwrite(out, 1, n, f) != n || fclose(f)) die(to, "cannot write");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: seed_modelfile DIR\n");
        return 2;
    }
    char p[4096], q[4096];
    snprintf(p, sizeof p, "%s/model.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 0, TOKENIZER_WORD);
    snprintf(q, sizeof q, "%s/no_arch.bin", argv[1]);
    drop_arch(p, q);
    snprintf(p, sizeof p, "%s/checkpoint.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 1, TOKENIZER_WORD);
    snprintf(p, sizeof p, "%s/family.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .cell = CELL_LSTM, .layers = 2, .bidirectional = 1,
                               .attention = ATT_LOCAL_PREDICTIVE, .input_feed = 1, .window = 2, .scaled = 1,
                               .tie_embeddings = 1}, 0, TOKENIZER_WORD);
    snprintf(p, sizeof p, "%s/luong.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1, .attention = ATT_LUONG_GENERAL}, 0,
                TOKENIZER_WORD);
    snprintf(p, sizeof p, "%s/bpe.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 0, TOKENIZER_BPE);
    snprintf(p, sizeof p, "%s/char.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 0, TOKENIZER_CHAR);
    snprintf(p, sizeof p, "%s/none.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 0, TOKENIZER_NONE);
    snprintf(p, sizeof p, "%s/spm.bin", argv[1]);
    write_model(p, (ModelDims){.embed = 2, .hidden = 2, .layers = 1}, 0, TOKENIZER_SPM);
    snprintf(p, sizeof p, "%s/int8.bin", argv[1]);
    write_model_as(p, (ModelDims){.embed = 4, .hidden = 4, .layers = 1}, 0, TOKENIZER_WORD, 1);
    return 0;
}
