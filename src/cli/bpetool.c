/* bpetool.c — nmt bpe learn|apply|join; see bpetool.h. */
#include "cli/bpetool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

#include "io/lines.h"     /* defines: LineReader, line_read, lines_too_long, lines_read_error */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read */
#include "text/segment.h"   /* defines: Segmenter, segmenter_apply, segmenter_detokenize, segmenter_learn_bpe */
#include "text/subword.h"   /* defines: Bpe, bpe_learn, bpe_to_text, bpe_from_text */
#include "text/vocab.h"     /* defines: VocabCounter */

/* Called for each line of the inputs with the input's name and the line's number; a
 * non-zero return stops the reading. The line is len bytes, not NUL-terminated. */
typedef int (*LineFn)(void *ctx, const char *name, long number, const char *line, size_t len, Error *err);

/* The lines of chunk[0..len) (as line_read read it: LF only at its end) as subword-nmt
 * sees them, reading as Python reads standard input: a line ends at LF, CRLF or a lone
 * CR, and fn gets it with that ending made LF (a last line without one, without). */
static int universal_lines(char *chunk, size_t len, const char *name, long *number, LineFn fn, void *ctx,
                           Error *err)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (chunk[i] != '\r' && chunk[i] != '\n') continue;
        size_t end = i + 1;
        if (chunk[i] == '\r') {
            chunk[i] = '\n';
            if (i + 1 < len && chunk[i + 1] == '\n') i++;
        }
        int status = fn(ctx, name, (*number)++, chunk + start, end - start, err);
        if (status) return status;
        start = i + 1;
    }
    return start < len ? fn(ctx, name, (*number)++, chunk + start, len - start, err) : 0;
}

/* Calls fn for each line of the inputs in turn: without its line end (LF, and any CRs
 * before it), or with keep_ends as universal_lines cuts them. A line longer than the
 * limit is refused (refuse_long: an error naming it), or else passed on as an empty
 * line, with a warning. */
static int each_line(char *const *inputs, int n_inputs, int keep_ends, const LineLimit *limit, int refuse_long,
                     LineFn fn, void *ctx, Error *err)
{
    char *line = NULL;
    size_t cap = 0;
    int status = 0;
    for (int k = 0; k < n_inputs && status == 0; k++) {
        int is_stdin = !strcmp(inputs[k], "-");
        const char *name = is_stdin ? "standard input" : inputs[k];
        FILE *f = is_stdin ? stdin : fopen(inputs[k], "r");
        if (!f) {
            status = error_set(err, "%s: %s", inputs[k], strerror(errno));
            break;
        }
        LineReader r;
        line_reader_init(&r, f, limit);
        ssize_t len;
        /* number: the next line's (universal_lines may find several in one read). */
        for (long number = 1; status == 0;) {
            len = line_read(&r, &line, &cap, !refuse_long);
            if (len == LINE_EOF) break;
            if (len == LINE_ERROR) {
                status = lines_read_error(err, name);
                break;
            }
            if (len == LINE_TOO_LONG) {
                status = lines_too_long(err, name, number, limit);
                if (refuse_long) break;
                fprintf(stderr, "nmt: warning: %s; an empty line out\n", err->msg);
                status = fn(ctx, name, number++, "\n", keep_ends, err);
                continue;
            }
            if (keep_ends) {
                status = universal_lines(line, (size_t)len, name, &number, fn, ctx, err);
                continue;
            }
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                line[--len] = 0;
            status = fn(ctx, name, number++, line, (size_t)len, err);
        }
        line_reader_free(&r);
        if (!is_stdin) fclose(f);
    }
    free(line);
    return status;
}

static int tokenize(const char *name, long number, const char *line, size_t len, const TextOptions *text,
                    TokenList *words, Error *err)
{
    Error inner;
    if (text_tokenize(line, len, text, words, &inner) == 0) return 0;
    return error_set(err, "%s:%ld: %s", name, number, inner.msg);
}

/* subword-nmt's words: the line stripped of spaces, CR and LF at both ends and split at
 * single spaces, empty words dropped; no normalisation. Into *words (pointers into
 * *copy, both malloc'd). Refuses what Python would not decode (and NUL, which a word
 * here cannot hold). Returns how many words, or -1. */
static int split_words(const char *name, long number, const char *line, size_t len, char **copy, char ***words,
                       Error *err)
{
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)line + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step <= 0) return error_set(err, "%s:%ld: invalid UTF-8 at byte %zu", name, number, at);
        if (cp == 0) return error_set(err, "%s:%ld: NUL byte at byte %zu", name, number, at);
        at += (size_t)step;
    }
    *copy = xmalloc(len + 1);
    memcpy(*copy, line, len);
    (*copy)[len] = 0;
    *words = xmalloc(sizeof(char *) * (len / 2 + 1));
    int n = 0;
    for (char *p = strtok(*copy, " \r\n"); p; p = strtok(NULL, " \r\n"))
        (*words)[n++] = p;
    return n;
}

/* ---------------------------------------------------------------- learn */

static int count_line(void *ctx, const char *name, long number, const char *line, size_t len, Error *err)
{
    const BpeToolOptions *opt = ((void **)ctx)[0];
    VocabCounter *counter = ((void **)ctx)[1];
    TokenList words;
    if (tokenize(name, number, line, len, &opt->text, &words, err)) return -1;
    for (int i = 0; i < words.n; i++)
        vocab_counter_add(counter, words.tokens[i]);
    token_list_free(&words);
    return 0;
}

static int count_line_subword_nmt(void *ctx, const char *name, long number, const char *line, size_t len,
                                  Error *err)
{
    VocabCounter *counter = ((void **)ctx)[1];
    char *copy, **words;
    int n = split_words(name, number, line, len, &copy, &words, err);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++)
        vocab_counter_add(counter, words[i]);
    free(words);
    free(copy);
    return 0;
}

/* --lowercase and --nfkc change the text, which subword-nmt's format reads as it is. */
static int text_options_refused(const BpeToolOptions *opt, const char *command, Error *err)
{
    if (opt->format != BPE_SUBWORD_NMT || (!opt->text.lowercase && !opt->text.nfkc)) return 0;
    return error_set(err, "bpe %s: %s applies only to nmt's codes format (--codes-format subword-nmt reads "
                          "pre-tokenised text as it is, as subword-nmt does): remove it",
                     command, opt->text.lowercase ? "--lowercase" : "--nfkc");
}

int bpe_tool_learn_usage(const BpeToolOptions *opt, Error *err)
{
    return text_options_refused(opt, "learn", err);
}

int bpe_tool_learn(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err)
{
    VocabCounter *counter = vocab_counter_new();
    void *ctx[2] = {(void *)opt, counter};
    int snmt = opt->format == BPE_SUBWORD_NMT;
    int status = each_line(inputs, n_inputs, snmt, &opt->lines, 1, snmt ? count_line_subword_nmt : count_line, ctx,
                           err);
    if (status == 0) {
        Bpe b;
        long too_long = segmenter_learn_bpe(&b, counter, opt->merges, opt->format, NULL);
        if (too_long)
            fprintf(stderr, "nmt: warning: %ld word%s longer than %d bytes left out of learning the merges\n", too_long,
                    too_long == 1 ? "" : "s", BPE_MAX_WORD_BYTES);
        char *codes = bpe_to_text(&b);
        if (fputs(codes, out) < 0 || fflush(out) != 0) status = error_set(err, "cannot write: %s", strerror(errno));
        if (b.n < opt->merges)
            fprintf(stderr, "nmt: learned %d merges of the %d asked for: after them no pair of symbols occurs twice\n", b.n,
                    opt->merges);
        free(codes);
        bpe_free(&b);
    }
    vocab_counter_free(counter);
    return status;
}

/* ---------------------------------------------------------------- apply and join */

typedef struct {
    const Segmenter *seg;
    const TextOptions *text;
    FILE *out;
} LineJob;

static int write_tokens(FILE *out, char *const *tokens, int n, Error *err)
{
    for (int i = 0; i < n; i++)
        if ((i > 0 && fputc(' ', out) == EOF) || fputs(tokens[i], out) < 0) break;
    if (fputc('\n', out) == EOF || fflush(out) != 0) return error_set(err, "cannot write: %s", strerror(errno));
    return 0;
}

static int apply_line(void *ctx, const char *name, long number, const char *line, size_t len, Error *err)
{
    const LineJob *job = ctx;
    TokenList words, pieces;
    if (tokenize(name, number, line, len, job->text, &words, err)) return -1;
    segmenter_apply(job->seg, SIDE_SOURCE, &words, &pieces);
    int status = write_tokens(job->out, pieces.tokens, pieces.n, err);
    token_list_free(&words);
    token_list_free(&pieces);
    return status;
}

static int is_strip(char c) { return c == ' ' || c == '\r' || c == '\n'; }

/* One line (with its LF, if it had one) as subword-nmt's apply-bpe writes it: the
 * spaces before the first word and the spaces and line end after the last kept as
 * they are (a line of nothing else is written as it is), the words' pieces between,
 * separated by single spaces. */
static int apply_line_subword_nmt(void *ctx, const char *name, long number, const char *line, size_t len,
                                  Error *err)
{
    const LineJob *job = ctx;
    char *copy, **words;
    int n = split_words(name, number, line, len, &copy, &words, err);
    if (n < 0) return -1;
    size_t lead = 0, trail = 0;
    while (lead < len && is_strip(line[lead])) lead++;
    while (lead + trail < len && is_strip(line[len - 1 - trail])) trail++;
    TokenList pieces;
    subword_segment(&job->seg->src, words, n, &pieces);
    int bad = fwrite(line, 1, lead, job->out) != lead;
    for (int i = 0; i < pieces.n && !bad; i++)
        bad = (i > 0 && fputc(' ', job->out) == EOF) || fputs(pieces.tokens[i], job->out) < 0;
    if (!bad) bad = fwrite(line + len - trail, 1, trail, job->out) != trail;
    int status = bad || fflush(job->out) != 0 ? error_set(err, "cannot write: %s", strerror(errno)) : 0;
    token_list_free(&pieces);
    free(words);
    free(copy);
    return status;
}

/* What path holds: 1 a model file (it starts "NMTMODEL"), 0 anything else, -1 nothing
 * that can be read as a regular file (missing, a directory, a pipe: reading the start
 * of a pipe would take it from the input). */
static int file_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[8] = {0};
    int is_model = fread(magic, 1, sizeof magic, f) == sizeof magic && !memcmp(magic, "NMTMODEL", 8);
    fclose(f);
    return is_model;
}

int bpe_tool_apply_usage(const BpeToolOptions *opt, char *const *inputs, int n_inputs, Error *err)
{
    if (opt->chars) {
        if (opt->target)
            return error_set(err, "bpe apply: --target applies only to a model file (--char splits both sides alike): "
                                  "remove it");
        if (n_inputs > 0 && strcmp(inputs[0], "-") && file_kind(inputs[0]) == 1)
            return error_set(err, "bpe apply: --char takes no MODEL.bin (%s is a model file, which brings its own "
                                  "segmentation): remove --char, or the model", inputs[0]);
        if (opt->format_given)
            return error_set(err, "bpe apply: --codes-format applies only to a codes file (--char reads no codes): "
                                  "remove it");
        return 0;
    }
    /* A file that cannot be read is left to bpe_tool_apply, which says why. */
    int kind = file_kind(opt->codes), model = kind == 1;
    if (kind == 0 && opt->target)
        return error_set(err, "bpe apply: --target applies only to a model file (%s is a codes file, with the merges "
                              "of one side): remove it", opt->codes);
    if (model && (opt->text.lowercase || opt->text.nfkc))
        return error_set(err, "bpe apply: %s applies only to a codes file or --char (%s is a model file, which "
                              "brings its own text options): remove it", opt->text.lowercase ? "--lowercase" : "--nfkc",
                         opt->codes);
    if (model && opt->format_given)
        return error_set(err, "bpe apply: --codes-format applies only to a codes file (%s is a model file, which "
                              "brings its own merges): remove it", opt->codes);
    if (text_options_refused(opt, "apply", err)) return -1;
    return 0;
}

/* The segmenter (and text options) that opt->codes names: a model file's, with its
 * protected symbols (into *symbols, the caller's to free), or a codes file's merges with
 * opt->text. */
static int load_segmenter(const BpeToolOptions *opt, Segmenter *seg, TextOptions *text, UserSymbols *symbols,
                          Error *err)
{
    memset(seg, 0, sizeof *seg);
    *text = opt->text;
    if (opt->chars) {
        seg->kind = TOKENIZER_CHAR;
        return 0;
    }
    /* A model file is told by its magic, and then read once, by modelfile_read. */
    if (file_kind(opt->codes) != 1) {
        size_t len;
        unsigned char *data;
        if (read_whole_file(opt->codes, &data, &len, err)) return -1;
        seg->kind = TOKENIZER_BPE;
        int status = bpe_from_text_format(&seg->src, (const char *)data, len, opt->format, opt->codes, err);
        free(data);
        return status;
    }
    ModelFile mf;
    if (modelfile_read(opt->codes, &mf, err)) return -1;
    int status = 0;
    if (mf.seg.kind == TOKENIZER_WORD) {
        status = error_set(err, "%s: the model uses word tokens (data.tokenizer \"word\"): there are no merges to "
                                "apply", opt->codes);
    } else if (mf.seg.kind == TOKENIZER_NONE) {
        status = error_set(err, "%s: the model reads text segmented elsewhere (data.tokenizer \"none\"): it has no "
                                "segmentation of its own to apply", opt->codes);
    } else {
        /* The side asked for becomes the source side of a segmenter of our own: its
         * merges, or under spm its SentencePiece model. */
        Bpe *side = opt->target ? &mf.seg.tgt : &mf.seg.src;
        SpmModel *spm = opt->target ? &mf.seg.spm_tgt : &mf.seg.spm_src;
        seg->kind = mf.seg.kind;
        seg->src = *side;
        *side = (Bpe){0};
        seg->spm_src = *spm;
        *spm = (SpmModel){0};
        *text = mf.text;
        *symbols = mf.symbols;  /* moved: text and seg point at the caller's */
        mf.symbols = (UserSymbols){0};
        text->symbols = seg->symbols = symbols->n ? symbols : NULL;
    }
    modelfile_free(&mf);
    return status;
}

int bpe_tool_apply(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err)
{
    Segmenter seg;
    TextOptions text;
    UserSymbols symbols = {0};
    if (load_segmenter(opt, &seg, &text, &symbols, err)) return -1;
    LineJob job = {&seg, &text, out};
    /* Codes read as subword-nmt's are applied to lines read as subword-nmt reads them;
     * a model file's merges are always nmt's. */
    int snmt = seg.kind == TOKENIZER_BPE && seg.src.format == BPE_SUBWORD_NMT;
    int status = each_line(inputs, n_inputs, snmt, &opt->lines, 0, snmt ? apply_line_subword_nmt : apply_line, &job,
                           err);
    segmenter_free(&seg);
    user_symbols_free(&symbols);
    return status;
}

static int join_line(void *ctx, const char *name, long number, const char *line, size_t len, Error *err)
{
    (void)name;
    (void)number;
    const LineJob *job = ctx;
    /* Pieces are separated by single spaces; splitting on spaces only keeps any other
     * byte (already valid or not: join does not judge) inside its piece. */
    char *copy = xmalloc(len + 1);
    memcpy(copy, line, len);
    copy[len] = 0;
    int n = 0;
    char **pieces = xmalloc(sizeof(char *) * (len / 2 + 1));
    for (char *p = strtok(copy, " "); p; p = strtok(NULL, " "))
        pieces[n++] = p;
    char *sentence = segmenter_detokenize(job->seg, pieces, n);
    int status = 0;
    if (fputs(sentence, job->out) < 0 || fputc('\n', job->out) == EOF || fflush(job->out) != 0)
        status = error_set(err, "cannot write: %s", strerror(errno));
    free(sentence);
    free(pieces);
    free(copy);
    return status;
}

int bpe_tool_join(char *const *inputs, int n_inputs, FILE *out, const LineLimit *limit, Error *err)
{
    Segmenter seg = {.kind = TOKENIZER_BPE};
    LineJob job = {&seg, NULL, out};
    return each_line(inputs, n_inputs, 0, limit, 0, join_line, &job, err);
}
