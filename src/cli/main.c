/* main.c — the nmt command line: parses options and dispatches to the subcommands.
 *
 * Exit codes: 0 success; 1 the job failed (bad input file, unreadable model, write
 * error); 2 usage error (unknown command or option); 3 out of memory; 130 and 143:
 * nmt train stopped by SIGINT or SIGTERM (128 + the signal's number, as a shell
 * reports a process the signal killed) after writing a checkpoint to resume from.
 * In a job of several MPI ranks (nmt-mpi) an error on any rank ends them all, exit 1.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/average.h"   /* defines: average_models */
#include "kernels/blas.h"      /* defines: blas_select_kernel, blas_set_threads, blas_check_memory_limit */
#include "eval/bleu.h"      /* defines: MetricOptions, bleu_tokenize_parse, bleu_tokenize_for_language */
#include "cli/bpetool.h"   /* defines: BpeToolOptions, bpe_tool_learn(_usage), bpe_tool_apply(_usage), bpe_tool_join */
#include "eval/classeval.h" /* defines: ClassEvalResult, classeval_run, classeval_print */
#include "decode/classify.h"  /* defines: ClassifyOptions, classify_stream */
#include "files/config.h"    /* defines: Config, config_load_keys, config_set, config_check */
#include "decode/decode.h"    /* defines: LENGTH_AVERAGE */
#include "train/dist.h"      /* defines: dist_init, dist_rank, dist_size, dist_barrier, dist_finalize, dist_abort */
#include "eval/eval.h"      /* defines: eval_run, eval_print */
#include "cli/info.h"      /* defines: info_print */
#include "io/lines.h"     /* defines: LineLimit, LINES_MAX_BYTES_MIN, LINES_MAX_BYTES_MAX */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read */
#include "io/outfile.h"   /* defines: OutFile, outfile_open, outfile_commit, outfile_discard */
#include "eval/score.h"     /* defines: ScoreOptions, score_run */
#include "train/plot.h"      /* defines: plot_training */
#include "layers/pooling.h"   /* defines: POOL_ATTENTION, pooling_name */
#include "train/train.h"     /* defines: train_run */
#include "decode/translate.h" /* defines: translate_stream */
#include "decode/unkdict.h"   /* defines: UnkDict, unkdict_load */

#define NMT_VERSION "0.4.0"

static const char *usage_main =
    "usage: nmt COMMAND [options]\n"
    "\n"
    "Neural machine translation (attention encoder-decoders, the Transformer) and sentence\n"
    "classification (an attention-pooled recurrent encoder), in C.\n"
    "\n"
    "commands:\n"
    "  train CONFIG.json            build vocabularies, train, write checkpoints and model.bin\n"
    "  train CONFIG.json --resume   go on with an interrupted run from its newest checkpoint\n"
    "  translate MODEL.bin          translate stdin to stdout, one line per line\n"
    "  classify MODEL.bin           a classifier's label for each line of stdin\n"
    "  eval MODEL.bin TEST.tsv      BLEU, chrF and perplexity on held-out sentence pairs;\n"
    "                               a classifier's accuracy, F1 and confusion matrix\n"
    "  info MODEL.bin               what a model or checkpoint file holds\n"
    "  score REF.txt -i HYP.txt     BLEU and chrF of translations against references (sacreBLEU)\n"
    "  plot RUN_DIR                 SVG chart of a run's training and validation loss and BLEU\n"
    "  average A.bin B.bin -o OUT   the mean of several checkpoints' weights, as a model file\n"
    "  bpe learn|apply|join         subword segmentation on its own, for pipelines\n"
    "\n"
    "  nmt COMMAND --help           options of a command\n"
    "  nmt --version\n";

static const char *usage_train =
    "usage: nmt train CONFIG.json [--set SECTION.KEY=VALUE ...] [--resume | --init-from MODEL.bin]\n"
    "                 [--quiet | --verbose] [--export-batches FILE]\n"
    "       nmt train --resume RUN_DIR [--set train.epochs=N ...] [--quiet]\n"
    "\n"
    "Train a model as CONFIG.json says (see README.md for every key). Progress goes to\n"
    "stderr; OUTPUT_DIR gets config.json, train.log (JSON lines), checkpoint-STEP.bin\n"
    "(the newest train.keep_checkpoints; checkpoint.bin is the newest), model.bin and\n"
    "training.svg (the loss curves, as nmt plot draws them).\n"
    "\n"
    "  --resume    go on from OUTPUT_DIR's newest checkpoint exactly as the run would\n"
    "              have gone on (start if there is none); with RUN_DIR, the run's\n"
    "              RUN_DIR/config.json is the config and RUN_DIR the output directory;\n"
    "              a raised train.epochs or train.max_steps continues a finished run\n"
    "  --init-from MODEL.bin\n"
    "              a new run from MODEL.bin's weights (model.bin, best.bin or a\n"
    "              checkpoint), vocabularies, tokenizer and architecture, with a new\n"
    "              optimizer at step 0: fine-tuning (train.init_from in the config)\n"
    "  --set SECTION.KEY=VALUE\n"
    "              override one config key, validated like the file's own keys\n"
    "              (--set train.batch_size=32 --set model.cell=lstm); repeatable\n"
    "  --quiet     no progress lines\n"
    "  --verbose   on a terminal, the periodic step lines as well as the live progress\n"
    "              line; everywhere, also the learning rate and gradient norm\n"
    "  --export-batches FILE\n"
    "              do not train: write the batches training would use (train.max_steps\n"
    "              of them) and held-out sources as token ids, for scripts/bench_torch.py\n"
    "\n"
    "SIGINT (Ctrl-C) or SIGTERM stops training after the current step with a checkpoint\n"
    "(a second one stops at once): exit status 130 or 143. Exit status 1: an error.\n";

static const char *usage_translate =
    "usage: nmt translate MODEL.bin [INPUT ...] [-o OUTPUT] [--max-len N] [--batch N] [--beam K]\n"
    "                     [--threads N]\n"
    "       nmt translate [INPUT ...] [options] --models MODEL.bin MODEL.bin ...\n"
    "                     [--length-penalty A] [--nbest N] [--align] [--attention-json]\n"
    "                     [--attention-svg DIR [--attention-heads]] [--align-layer N]\n"
    "                     [--replace-unk] [--unk-dict FILE] [--max-line-bytes N]\n"
    "\n"
    "Translate each line of the INPUT files in turn (standard input if none, or for -);\n"
    "write one line per input line, flushed, to standard output (or -o OUTPUT), so it\n"
    "can sit in a pipeline. Empty lines stay empty.\n"
    "\n"
    "  --max-len N   at most N output words (default: 2 x source words + 10)\n"
    "  --models MODEL.bin MODEL.bin ...\n"
    "                an ensemble: every model's next-word probabilities averaged at each\n"
    "                step (they must share their vocabularies and text options; the\n"
    "                first reads and writes the text); the files up to the next option\n"
    "  --threads N   OpenBLAS threads (default 0: OpenBLAS's choice, one per core, or\n"
    "                OPENBLAS_NUM_THREADS)\n"
    "  --batch N     decode N lines together (faster for files; output comes in groups\n"
    "                of N lines; default 1: each line is answered as soon as it is read)\n"
    "  --beam K      beam search with K beams (default 1: greedy search)\n"
    "  --length-penalty A\n"
    "                beam scores are log P / ((5 + length) / 6)^A (default 0.6; 0: none;\n"
    "                avg: log P / length, the average log-probability per word)\n"
    "  --nbest N     the N best translations per line, as Moses/Marian n-best lines\n"
    "                \"LINE ||| translation ||| F0= LOGPROB ||| SCORE\" (LINE counts from 0;\n"
    "                LOGPROB = log P, SCORE = LOGPROB / length penalty; beam >= N)\n"
    "  --nbest-format moses|nmt\n"
    "                nmt: nmt 0.1's \"LINE ||| translation ||| SCORE\" (alignment last)\n"
    "  --align       append \" ||| \" and the hard alignment \"j-i ...\": output word i\n"
    "                attends most to source token j (both counted from 0)\n"
    "  --attention-json\n"
    "                one JSON object per line instead: source and output tokens,\n"
    "                translation, score and the attention matrix\n"
    "  --attention-svg DIR\n"
    "                also write DIR/LINE.svg, a heatmap of each line's attention\n"
    "  --attention-heads\n"
    "                a Transformer's: also DIR/LINE.hK.svg, the map of each head K\n"
    "  --align-layer N\n"
    "                a Transformer's attention is decoder layer N's cross-attention,\n"
    "                averaged over its heads (default: the last layer)\n"
    "  --replace-unk replace each output <unk> by the source word it attends to most\n"
    "  --unk-dict FILE\n"
    "                ... or by that word's translation in FILE (source<TAB>target lines);\n"
    "                implies --replace-unk\n"
    "  --max-line-bytes N\n"
    "                the longest input line, in bytes (default 1048576, 1 MiB; 1024 to\n"
    "                2^30); a longer line is translated as empty, with a warning naming\n"
    "                it, and does not make nmt hold it in memory\n"
    "\n"
    "Exit status: 0 translated; 1 an input or a model cannot be read (a read error\n"
    "included) or the output cannot be written; 2 usage error.\n";

static const char *usage_classify =
    "usage: nmt classify MODEL.bin [INPUT ...] [-o OUTPUT] [--probs [all]] [--batch N]\n"
    "                    [--attention-svg DIR] [--threads N] [--max-line-bytes N]\n"
    "\n"
    "Label each line of the INPUT files (standard input without any, or -) with a classifier\n"
    "(a model trained with model.type \"classifier\"): one output line per input line.\n"
    "\n"
    "  -o, --output FILE      write there instead of standard output\n"
    "  --probs                the label, a tab and its probability\n"
    "  --probs all            every label and its probability, tab-separated, in the\n"
    "                         model's label order (nmt info lists it)\n"
    "  --batch N              lines scored together (default 64)\n"
    "  --attention-svg DIR    also DIR/LINE.svg: the line's words shaded by their attention\n"
    "                         weight (attention pooling only)\n"
    "  --threads N            OpenBLAS threads (default: all cores)\n"
    "  --max-line-bytes N     the longest input line, in bytes (default 1048576; 1024 to\n"
    "                         2^30): a longer one gets an empty output line and a warning\n"
    "\n"
    "A line with no words gets an empty output line and a warning; a line of more than\n"
    "1000 words (pieces) is classified by its first 1000, with a warning. Exit 0, 1 on an\n"
    "error (an unreadable model or input, a translation model, a write error), 2 usage\n"
    "error.\n";

static const char *usage_info =
    "usage: nmt info MODEL.bin [--json]\n"
    "\n"
    "What a model or checkpoint file holds: format version, architecture, sizes,\n"
    "parameter count, vocabularies, text options, training progress, the best validation\n"
    "(checkpoints) and the config it was trained with. --json: one JSON object.\n";

static const char *usage_eval =
    "usage: nmt eval MODEL.bin TEST.tsv [--json] [--beam K] [--length-penalty A]\n"
    "                [-tok NAME] [-l SRC-TGT] [-lc] [--threads N] [--max-line-bytes N]\n"
    "       nmt eval CLASSIFIER.bin TEST.tsv [--json] [--text-column N] [--label-column N]\n"
    "                [--max-line-bytes N]\n"
    "\n"
    "Translate column 1 of TEST.tsv, score it against column 2 as written with corpus BLEU\n"
    "and chrF2 (as sacreBLEU computes them), and report the teacher-forced loss and\n"
    "perplexity. BLEU's tokeniser is 13a unless the references are Chinese or Japanese\n"
    "text (zh, char; said on stderr); the signatures say what was computed.\n"
    "\n"
    "  --json        one JSON object instead of text\n"
    "  --beam K, --length-penalty A   decode as nmt translate does (default greedy)\n"
    "  -tok, --tokenize NAME, -l, --language-pair SRC-TGT, -lc, --lowercase\n"
    "                BLEU's tokeniser and case, as for nmt score\n"
    "  --threads N   OpenBLAS threads, as for nmt translate\n"
    "  --max-line-bytes N\n"
    "                the longest line of TEST.tsv, in bytes (default 1048576; 1024 to\n"
    "                2^30): a longer one is an error naming it (exit 1)\n"
    "\n"
    "A classifier (model.type \"classifier\"): label the text column of TEST.tsv as nmt\n"
    "classify does and report accuracy, macro F1, each label's precision, recall, F1 and\n"
    "support, the confusion matrix and the loss per line; lines whose label training never\n"
    "saw are counted and left out. The columns are the model's (data.text_column,\n"
    "data.label_column) unless --text-column / --label-column (0: the last) say otherwise.\n";

static const char *usage_score =
    "usage: nmt score REF.txt -i HYP.txt [-tok NAME] [-l SRC-TGT] [-lc] [--json] [--sentence]\n"
    "                 [--max-line-bytes N]\n"
    "       nmt score REF.txt [options] < HYP.txt\n"
    "\n"
    "Score translations (HYP.txt, one sentence per line) against references (REF.txt,\n"
    "the same number of lines) with corpus BLEU and chrF2 exactly as sacreBLEU 2.x does,\n"
    "in sacreBLEU's order (sacrebleu REF -i HYP), and print them as nmt eval does.\n"
    "Nothing is normalised. Without -i the translations come from standard input; -i -\n"
    "says so explicitly. Lines with invalid UTF-8 or NUL bytes are scored as empty, with a\n"
    "warning; references with <unk> where the translations have none get a warning that\n"
    "the files look swapped.\n"
    "\n"
    "  -i, --input HYP.txt   the translations\n"
    "  -tok, --tokenize NAME BLEU's tokeniser: 13a (default), zh (each Chinese character\n"
    "                        a word), char (each character a word), none (the text's own\n"
    "                        spaces); the signature says which (tok:NAME)\n"
    "  -l, --language-pair SRC-TGT\n"
    "                        pick the tokeniser for the target language as sacreBLEU does:\n"
    "                        zh for zh; char for ja and ko (sacreBLEU's MeCab tokenisers\n"
    "                        are not in nmt; said on stderr); 13a otherwise\n"
    "  -lc, --lowercase      compare lowercased text (Python's str.lower), for BLEU and\n"
    "                        chrF; the signatures say case:lc\n"
    "  --json                one JSON object instead of text\n"
    "  --sentence            first one line per pair: LINE<TAB>sentence BLEU<TAB>chrF2\n"
    "                        (sacreBLEU's sentence_bleu: effective order, exp smoothing)\n"
    "  --max-line-bytes N    the longest line of either file, in bytes (default 1048576;\n"
    "                        1024 to 2^30): a longer one is an error naming it\n"
    "\n"
    "Exit status: 0 scored; 1 a file is missing or unreadable (a read error, a line over\n"
    "the limit), or the line counts differ; 2 usage error (also two files without -i:\n"
    "nmt score's older HYP REF order, which sacreBLEU would read as two references).\n";
static const char *usage_average =
    "usage: nmt average MODEL.bin MODEL.bin ... -o AVERAGE.bin\n"
    "\n"
    "Average the weights of two or more model or checkpoint files of one model (the\n"
    "same architecture, sizes, vocabularies and subword merges: checked, and what\n"
    "differs is named) and write a model file: typically a run's last few checkpoints,\n"
    "which together often translate a little better than the last alone. The first\n"
    "file gives the config and vocabularies; the result has no optimizer state and\n"
    "cannot be resumed. AVERAGE.bin may not be one of the inputs.\n"
    "\n"
    "Exit status: 0 written; 1 a file cannot be read or written, or the files are not\n"
    "checkpoints of one model; 2 usage error.\n";

static const char *usage_plot =
    "usage: nmt plot RUN_DIR [-o FILE.svg]\n"
    "\n"
    "Draw RUN_DIR/train.log as an SVG line chart against the update step: training and\n"
    "validation loss on the left axis, validation BLEU (when validated with BLEU) on\n"
    "the right. nmt train writes the same chart as OUTPUT_DIR/training.svg at the end.\n"
    "\n"
    "  -o FILE.svg   where to write it (default RUN_DIR/training.svg)\n";

static const char *usage_bpe =
    "usage: nmt bpe learn [--merges N] [--lowercase] [--nfkc] [-o CODES] [INPUT ...]\n"
    "       nmt bpe learn --codes-format subword-nmt [--merges N] [-o CODES] [INPUT ...]\n"
    "       nmt bpe apply CODES [--lowercase] [--nfkc] [-o OUTPUT] [INPUT ...]\n"
    "       nmt bpe apply CODES --codes-format subword-nmt [-o OUTPUT] [INPUT ...]\n"
    "       nmt bpe apply MODEL.bin [--target] [-o OUTPUT] [INPUT ...]\n"
    "       nmt bpe apply --char [--lowercase] [--nfkc] [-o OUTPUT] [INPUT ...]\n"
    "       nmt bpe join [-o OUTPUT] [INPUT ...]\n"
    "       (each also takes --max-line-bytes N)\n"
    "\n"
    "Byte-pair encoding as nmt train uses it (data.tokenizer \"bpe\"), on its own. Lines\n"
    "are tokenised as training tokenises them: normalised, split at spaces and\n"
    "punctuation; characters of scripts written without spaces (Chinese, Japanese, Thai,\n"
    "...) are symbols of their own. INPUT files are read in turn (standard input if\n"
    "none, or for -).\n"
    "\n"
    "  learn   learn N merges (default 8000) from the text; write them in subword-nmt's\n"
    "          codes layout (\"#version: 0.2\", then one \"left right\" pair per line);\n"
    "          words longer than 4096 bytes are left out, with a warning counting them\n"
    "  apply   write each line as its pieces, separated by spaces, \"@@\" ending every\n"
    "          piece that continues into the next (\"low@@ er\"). CODES is a learn\n"
    "          output, or a model trained with data.tokenizer bpe: its source side's\n"
    "          merges (--target: its target side's) and its own text options\n"
    "  join    the reverse: glue the pieces back into words and detokenise\n"
    "\n"
    "  --merges N   merges to learn (1 to 1000000)\n"
    "  --lowercase  Unicode case folding (as data.lowercase), --nfkc  NFKC (as\n"
    "               data.normalization); a model file brings its own, and refuses them\n"
    "  --target     a model file's target side (a codes file has one side)\n"
    "  --char       every character its own piece; no CODES\n"
    "  --codes-format nmt|subword-nmt  whose codes (default nmt). subword-nmt: as\n"
    "               subword-nmt learn-bpe / apply-bpe, for its codes files: symbols are\n"
    "               code points, not nmt's grapheme clusters; lines are pre-tokenised\n"
    "               text, split at spaces only, nothing normalised\n"
    "  -o FILE      write to FILE instead of standard output\n"
    "  --max-line-bytes N  the longest input line, in bytes (default 1048576; 1024 to\n"
    "               2^30): learn refuses a longer one (exit 1); apply and join write an\n"
    "               empty line for it, with a warning\n";

static int fail(const Error *err)
{
    fprintf(stderr, "nmt: %s\n", err->msg);
    return 1;
}

/* The end of a command's output: standard output stays open; an -o file becomes the
 * target if the command succeeded (status 0), else the target is left as it was.
 * Returns the command's status, or -1 with err if writing the file failed. */
static int output_done(OutFile *of, int status, Error *err)
{
    if (of->f == stdout) return status;
    if (status) {
        outfile_discard(of);
        return status;
    }
    return outfile_commit(of, err);
}

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "nmt: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

/* The config at path with the --set overrides applied, then checked as a whole. A run
 * directory's config.json is one nmt recorded (config.h: ConfigOrigin). */
/* -1: the config file or the whole is wrong; -2: a --set argument is (a usage error). */
static int load_config(Config *cfg, const char *path, ConfigOrigin origin, char **sets, int n_sets, Error *err)
{
    if (config_load_keys(cfg, path, origin, err)) return -1;
    for (int i = 0; i < n_sets; i++)
        if (config_set(cfg, sets[i], err)) return -2;
    return config_check(cfg, path, err);
}

/* s as one word a POSIX shell reads back as s: as it is if it is made of characters no
 * shell treats specially, else in single quotes (each ' as '\''). */
static void print_shell_word(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        plain &= isalnum((unsigned char)*p) || strchr("/._-+:,=@%", *p) != NULL;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'') fputs("'\\''", f);
        else fputc(*p, f);
    }
    fputc('\'', f);
}

static int cmd_train(int argc, char **argv)
{
    const char *path = NULL, *init_from = NULL;
    TrainOptions opt = {0};
    char *sets[argc + 1]; /* the --set arguments, in order */
    int n_sets = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--set")) {
            if (i + 1 >= argc) return usage_error(usage_train, "train: --set needs SECTION.KEY=VALUE%s", "");
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(argv[i], "--quiet")) opt.quiet = 1;
        else if (!strcmp(argv[i], "--verbose")) opt.verbose = 1;
        else if (!strcmp(argv[i], "--resume")) opt.resume = 1;
        else if (!strcmp(argv[i], "--init-from")) {
            if (i + 1 >= argc) return usage_error(usage_train, "train: --init-from needs a MODEL.bin%s", "");
            init_from = argv[++i];
        } else if (!strcmp(argv[i], "--export-batches")) {
            if (i + 1 >= argc) return usage_error(usage_train, "train: --export-batches needs a FILE%s", "");
            opt.export_path = argv[++i];
        } else if (argv[i][0] == '-') return usage_error(usage_train, "train: unknown option %s", argv[i]);
        else if (!path) path = argv[i];
        else return usage_error(usage_train, "train: unexpected argument %s", argv[i]);
    }
    if (!path) return usage_error(usage_train, "train: missing CONFIG.json%s", "");
    if (opt.resume && opt.export_path)
        return usage_error(usage_train, "train: --export-batches does not resume; drop --resume%s", "");
    if (init_from && opt.resume)
        return usage_error(usage_train, "train: --init-from starts a new run and --resume goes on with one; a "
                                        "resumed run keeps the train.init_from it started with%s", "");
    /* nmt train --resume RUN_DIR: the run's own config, the directory as output.dir
     * (wherever the run has been moved to). */
    struct stat st;
    int run_dir = opt.resume && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    char *config_path = NULL;
    if (run_dir) {
        size_t n = strlen(path) + sizeof "/config.json";
        config_path = xmalloc(n);
        snprintf(config_path, n, "%s/config.json", path);
    }
    opt.config_path = run_dir ? config_path : path;
    Config cfg;
    Error err;
    /* Under mpirun (nmt-mpi) this process is one rank of a data-parallel job; anywhere
     * else, the only one. */
    if (dist_init(&argc, &argv, &err)) {
        free(config_path);
        return fail(&err);
    }
    int rank = dist_rank();
    config_defaults(&cfg);
    int status = load_config(&cfg, opt.config_path, run_dir ? CONFIG_RECORDED : CONFIG_WRITTEN, sets, n_sets, &err);
    if (status == 0 && run_dir) {
        free(cfg.dir);
        cfg.dir = xstrdup(path);
    }
    if (status == 0 && init_from) {
        free(cfg.init_from);
        cfg.init_from = xstrdup(init_from);
    }
    if (status == 0 && cfg.init_from) status = train_adopt_init_model(&cfg, opt.config_path, &err);
    if (status == 0) status = train_run(&cfg, &opt, &err);
    if (status == SIGINT || status == SIGTERM) {
        /* Every rank stopped after the same step; rank 0 wrote the checkpoint. */
        /* The run directory, not the config: its config.json is the config the run was
         * given, --set overrides included, which the command line may no longer say. */
        if (rank == 0) {
            fprintf(stderr, "nmt: %s; resume with: nmt train --resume ", err.msg);
            print_shell_word(stderr, cfg.dir);
            fputc('\n', stderr);
        }
        status = 128 + status;
        /* No rank leaves before rank 0 has written the checkpoint and said where: a rank
         * that exits is what lets mpirun, forwarding a SIGTERM, send the SIGKILL early. */
        if (dist_barrier(&err)) fprintf(stderr, "nmt: rank %d: %s\n", rank, err.msg);
    } else if (status) {
        if (rank > 0) fprintf(stderr, "nmt: rank %d: %s\n", rank, err.msg);
        else fail(&err);
        /* The other ranks may be waiting for this one in a collective they would never
         * leave: end them all. The checkpoints on disk are whole (rank 0 writes them
         * atomically). */
        if (dist_size() > 1) dist_abort(1);
        status = status == -2 ? 2 : 1;    /* a bad --set is a usage error */
    }
    config_free(&cfg);
    free(config_path);
    dist_finalize();
    return status;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* --max-line-bytes N, shared by translate, classify, eval, score and bpe. Returns 1 if
 * argv[*i] was it (and consumes its value into limit), 0 if not, -1 on a bad value
 * (max_line_usage says what it takes). */
static int parse_max_line_bytes(int argc, char **argv, int *i, LineLimit *limit)
{
    if (strcmp(argv[*i], "--max-line-bytes")) return 0;
    int bytes;
    if (*i + 1 >= argc || parse_int(argv[*i + 1], LINES_MAX_BYTES_MIN, LINES_MAX_BYTES_MAX, &bytes)) return -1;
    limit->max_bytes = bytes;
    (*i)++;
    return 1;
}

static const char *max_line_usage = "--max-line-bytes needs a number of bytes from 1024 to 1073741824";
_Static_assert(LINES_MAX_BYTES_MIN == 1024 && LINES_MAX_BYTES_MAX == 1073741824, "max_line_usage names the range");

static const char *beam_usage = "--beam needs a number from 1 to 100, --length-penalty a number from 0 to 5 or avg";

/* --beam K and --length-penalty A, shared by translate and eval. Returns 1 if argv[*i]
 * was one of them (and consumes its value), 0 if not, -1 on a bad value. */
static int parse_beam_options(int argc, char **argv, int *i, TranslateOptions *opt)
{
    if (!strcmp(argv[*i], "--beam")) {
        if (*i + 1 >= argc || parse_int(argv[*i + 1], 1, 100, &opt->beam)) return -1;
        (*i)++;
        return 1;
    }
    if (!strcmp(argv[*i], "--length-penalty")) {
        char *end;
        if (*i + 1 >= argc) return -1;
        if (!strcmp(argv[*i + 1], "avg")) {
            opt->length_penalty = LENGTH_AVERAGE;
        } else {
            double a = strtod(argv[*i + 1], &end);
            if (end == argv[*i + 1] || *end || !(a >= 0 && a <= 5)) return -1;
            opt->length_penalty = (float)a;
        }
        (*i)++;
        return 1;
    }
    return 0;
}

/* Translates each input (a path, or "-" for standard input) in turn into out. */
static int translate_inputs(ModelFile *mf, char **inputs, int n_inputs, FILE *out, const TranslateOptions *opt,
                            Error *err)
{
    long lines = 0;
    for (int k = 0; k < n_inputs; k++) {
        int is_stdin = !strcmp(inputs[k], "-");
        FILE *in = is_stdin ? stdin : fopen(inputs[k], "r");
        if (!in) return error_set(err, "%s: %s", inputs[k], strerror(errno));
        int status = translate_stream(mf, in, out, is_stdin ? "stdin" : inputs[k], opt, &lines, err);
        if (!is_stdin) fclose(in);
        if (status) return status;
    }
    return 0;
}

static int cmd_translate(int argc, char **argv)
{
    const char *model = NULL, *dict_path = NULL, *out_path = NULL;
    char *inputs[argc + 1]; /* the INPUT arguments, in order */
    const char *models[argc + 1];
    int n_inputs = 0, n_models = 0, threads = 0;
    TranslateOptions opt = {.length_penalty = 0.6f};
    for (int i = 0; i < argc; i++) {
        int beam_opt = parse_beam_options(argc, argv, &i, &opt);
        if (beam_opt < 0) return usage_error(usage_translate, "translate: %s", beam_usage);
        if (beam_opt > 0) continue;
        int line_opt = parse_max_line_bytes(argc, argv, &i, &opt.lines);
        if (line_opt < 0) return usage_error(usage_translate, "translate: %s", max_line_usage);
        if (line_opt > 0) continue;
        if (!strcmp(argv[i], "--max-len")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, 10000, &opt.max_len))
                return usage_error(usage_translate, "translate: --max-len needs a number from 1 to 10000%s", "");
            i++;
        } else if (!strcmp(argv[i], "--batch")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, 4096, &opt.batch))
                return usage_error(usage_translate, "translate: --batch needs a number from 1 to 4096%s", "");
            i++;
        } else if (!strcmp(argv[i], "--threads")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 0, 256, &threads))
                return usage_error(usage_translate, "translate: --threads needs a number from 0 to 256%s", "");
            i++;
        } else if (!strcmp(argv[i], "--nbest")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, 100, &opt.nbest))
                return usage_error(usage_translate, "translate: --nbest needs a number from 1 to 100%s", "");
            i++;
        } else if (!strcmp(argv[i], "--nbest-format")) {
            if (i + 1 >= argc || (strcmp(argv[i + 1], "moses") && strcmp(argv[i + 1], "nmt")))
                return usage_error(usage_translate, "translate: --nbest-format is moses or nmt%s", "");
            opt.nbest_format = !strcmp(argv[++i], "nmt") ? NBEST_NMT : NBEST_MOSES;
        } else if (!strcmp(argv[i], "--align")) {
            opt.align = 1;
        } else if (!strcmp(argv[i], "--attention-json")) {
            opt.attention_json = 1;
        } else if (!strcmp(argv[i], "--attention-svg")) {
            if (i + 1 >= argc) return usage_error(usage_translate, "translate: --attention-svg needs a DIR%s", "");
            opt.attention_svg = argv[++i];
        } else if (!strcmp(argv[i], "--attention-heads")) {
            opt.attention_heads = 1;
        } else if (!strcmp(argv[i], "--align-layer")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, MAX_LAYERS, &opt.align_layer))
                return usage_error(usage_translate, "translate: --align-layer needs a layer number from 1 to 8%s", "");
            i++;
        } else if (!strcmp(argv[i], "--replace-unk")) {
            opt.replace_unk = 1;
        } else if (!strcmp(argv[i], "--unk-dict")) {
            if (i + 1 >= argc) return usage_error(usage_translate, "translate: --unk-dict needs a FILE%s", "");
            dict_path = argv[++i];
            opt.replace_unk = 1;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) return usage_error(usage_translate, "translate: %s needs a FILE", argv[i]);
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--models")) {
            /* Marian's form: the model files up to the next option. */
            while (i + 1 < argc && argv[i + 1][0] != '-')
                models[n_models++] = argv[++i];
            if (n_models < 2)
                return usage_error(usage_translate, "translate: --models needs two or more MODEL.bin files%s", "");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(usage_translate, "translate: unknown option %s", argv[i]);
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    /* Without --models the first argument is the model, the rest the text to translate. */
    if (n_models == 0 && n_inputs > 0) {
        models[n_models++] = inputs[0];
        for (int k = 1; k < n_inputs; k++)
            inputs[k - 1] = inputs[k];
        n_inputs--;
    }
    model = n_models > 0 ? models[0] : NULL;
    if (n_inputs == 0) inputs[n_inputs++] = "-";
    int stdins = 0;
    for (int k = 0; k < n_inputs; k++)
        stdins += !strcmp(inputs[k], "-");
    const char *bad = !model ? "translate: missing MODEL.bin%s"
                    : stdins > 1 ? "translate: standard input (-) can be read only once%s"
                    : opt.attention_json && opt.nbest ? "translate: --attention-json writes the best translation only; "
                                                        "it does not combine with --nbest%s"
                    : opt.attention_heads && !opt.attention_svg ? "translate: --attention-heads draws heatmaps: it "
                                                                  "needs --attention-svg DIR%s"
                    : opt.attention_heads && n_models > 1 ? "translate: --attention-heads draws one model's heads; "
                                                            "it does not combine with --models%s"
                    : NULL;
    if (bad) return usage_error(usage_translate, bad, "");
    ModelFile mf;
    UnkDict dict = {0};
    Error err;
    blas_set_threads(threads);
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    if (mf.text.lowercase)
        fprintf(stderr, "nmt: note: %s writes lowercase: it was trained with data.lowercase true\n", model);
    if (model_classifies(&mf.model.dims)) {
        Error e;
        error_set(&e, "%s: a classifier (model.type \"classifier\"): label lines with nmt classify %s", model, model);
        modelfile_free(&mf);
        return fail(&e);
    }
    int status = 0, n_more = 0;
    ModelFile *more = xcalloc(n_models, sizeof(ModelFile));
    for (int k = 1; k < n_models && status == 0; k++) {
        char why[ERROR_LEN / 2];
        if (modelfile_read(models[k], &more[n_more], &err)) status = -1;
        else if (modelfile_compatible(&mf, &more[n_more++], 0, why, sizeof why))
            status = error_set(&err, "%s: cannot join %s in an ensemble (%s): an ensemble's models must share "
                                     "their vocabularies and the way they read text",
                               models[k], model, why);
    }
    ModelFile **more_models = xmalloc(sizeof(ModelFile *) * (n_more + 1));
    for (int k = 0; k < n_more; k++)
        more_models[k] = &more[k];
    opt.more_models = more_models;
    opt.more_rs = xcalloc(n_more + 1, sizeof(RunState));
    opt.n_more = n_more;
    /* A Transformer's attention options: every model of the run is one, with the layer. */
    for (int k = -1; k < n_more && status == 0 && (opt.align_layer || opt.attention_heads); k++) {
        const ModelDims *d = k < 0 ? &mf.model.dims : &more[k].model.dims;
        const char *name = k < 0 ? model : models[k + 1];
        const char *option = opt.align_layer ? "--align-layer" : "--attention-heads";
        if (!model_family(d)->attention_heads)
            status = error_set(&err, "%s: %s applies only to a Transformer (model.type \"transformer\"); a recurrent "
                                     "model has one attention", name, option);
        else if (opt.align_layer > d->dec_layers)
            status = error_set(&err, "%s: --align-layer %d: the model has %d decoder layer%s", name, opt.align_layer,
                               d->dec_layers, d->dec_layers > 1 ? "s" : "");
    }
    if (opt.attention_svg && mkdir(opt.attention_svg, 0777) != 0 && errno != EEXIST)
        status = error_set(&err, "%s: cannot create: %s", opt.attention_svg, strerror(errno));
    if (status == 0 && dict_path) {
        status = unkdict_load(&dict, dict_path, &mf.text, &opt.lines, &err);
        opt.unk_dict = &dict;
    }
    OutFile of = {.f = stdout};
    if (status == 0 && out_path) status = outfile_open(&of, out_path, &err);
    if (status == 0) status = translate_inputs(&mf, inputs, n_inputs, of.f, &opt, &err);
    status = output_done(&of, status, &err);
    if (status) fail(&err);
    unkdict_free(&dict);
    for (int k = 0; k < n_more; k++) {
        runstate_free(&opt.more_rs[k]);
        modelfile_free(&more[k]);
    }
    free(opt.more_rs);
    free(more_models);
    free(more);
    modelfile_free(&mf);
    return status ? 1 : 0;
}

static int cmd_classify(int argc, char **argv)
{
    const char *model = NULL, *out_path = NULL;
    char *inputs[argc + 1];
    int n_inputs = 0, threads = 0;
    ClassifyOptions opt = {0};
    for (int i = 0; i < argc; i++) {
        int line_opt = parse_max_line_bytes(argc, argv, &i, &opt.lines);
        if (line_opt < 0) return usage_error(usage_classify, "classify: %s", max_line_usage);
        if (line_opt > 0) continue;
        if (!strcmp(argv[i], "--probs")) {
            opt.probs = 1;
            if (i + 1 < argc && !strcmp(argv[i + 1], "all")) {
                opt.probs = 2;
                i++;
            }
        } else if (!strcmp(argv[i], "--batch")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, 4096, &opt.batch))
                return usage_error(usage_classify, "classify: --batch needs a number from 1 to 4096%s", "");
            i++;
        } else if (!strcmp(argv[i], "--threads")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 0, 256, &threads))
                return usage_error(usage_classify, "classify: --threads needs a number from 0 to 256%s", "");
            i++;
        } else if (!strcmp(argv[i], "--attention-svg")) {
            if (i + 1 >= argc) return usage_error(usage_classify, "classify: --attention-svg needs a DIR%s", "");
            opt.attention_svg = argv[++i];
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) return usage_error(usage_classify, "classify: %s needs a FILE", argv[i]);
            out_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(usage_classify, "classify: unknown option %s", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (!model) return usage_error(usage_classify, "classify: missing MODEL.bin%s", "");
    if (n_inputs == 0) inputs[n_inputs++] = "-";
    int stdins = 0;
    for (int k = 0; k < n_inputs; k++)
        stdins += !strcmp(inputs[k], "-");
    if (stdins > 1) return usage_error(usage_classify, "classify: standard input (-) can be read only once%s", "");
    ModelFile mf;
    Error err;
    blas_set_threads(threads);
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    int status = 0;
    if (!model_classifies(&mf.model.dims))
        status = error_set(&err, "%s: a translation model, not a classifier: translate with nmt translate %s "
                                 "(nmt classify takes a model trained with model.type \"classifier\")", model, model);
    else if (opt.attention_svg && mf.model.dims.pooling != POOL_ATTENTION)
        status = error_set(&err, "%s: --attention-svg draws attention pooling's weights; this classifier pools by "
                                 "%s", model, pooling_name(mf.model.dims.pooling));
    if (status == 0 && opt.attention_svg && mkdir(opt.attention_svg, 0777) != 0 && errno != EEXIST)
        status = error_set(&err, "%s: cannot create: %s", opt.attention_svg, strerror(errno));
    OutFile of = {.f = stdout};
    if (status == 0 && out_path) status = outfile_open(&of, out_path, &err);
    FILE *out = of.f;
    long lines = 0;
    for (int k = 0; k < n_inputs && status == 0; k++) {
        int is_stdin = !strcmp(inputs[k], "-");
        FILE *in = is_stdin ? stdin : fopen(inputs[k], "r");
        if (!in) {
            status = error_set(&err, "%s: %s", inputs[k], strerror(errno));
            break;
        }
        status = classify_stream(&mf, in, out, is_stdin ? "stdin" : inputs[k], &opt, &lines, &err);
        if (!is_stdin) fclose(in);
    }
    status = output_done(&of, status, &err);
    if (status) fail(&err);
    modelfile_free(&mf);
    return status ? 1 : 0;
}

/* nmt eval on a classifier: its own measures, and only its own options. */
static int eval_classifier(ModelFile *mf, const char *model, const char *test, int json, int text_col, int label_col,
                           const LineLimit *limit)
{
    ClassEvalResult res;
    Error err;
    if (classeval_run(mf, model, test, text_col, label_col, limit, &res, &err)) return fail(&err);
    classeval_print(&res, json, stdout);
    classeval_free(&res);
    return 0;
}

/* -l SRC-TGT: the target's code chooses the tokeniser (bleu_tokenize_for_language). */
static int language_pair_tokenizer(const char *pair, BleuTokenize *tok)
{
    const char *dash = strchr(pair, '-');
    if (!dash || dash == pair || !dash[1] || strchr(dash + 1, '-') || strlen(dash + 1) > 8) return -1;
    int substitute;
    *tok = bleu_tokenize_for_language(dash + 1, &substitute);
    if (substitute)
        fprintf(stderr, "nmt: note: sacreBLEU scores a %s target with MeCab (%s-mecab), which nmt does not have; "
                        "tok:char here, not comparable with %s-mecab scores\n",
                dash + 1, dash + 1, dash + 1);
    return 0;
}

/* sacreBLEU's scoring options, shared by nmt score and nmt eval: -tok/--tokenize NAME,
 * -l/--language-pair SRC-TGT (an explicit -tok wins, whatever the order), -lc/--lowercase.
 * At argv[*i]: 1 if it was one (*i moved to its value), 0 if not, -1 if it is malformed
 * (what is wrong in why[WHY_LEN]). *tokenize_given: 0 none, 1 by -l, 2 by -tok. */
#define WHY_LEN 200
static int parse_metric_options(int argc, char **argv, int *i, MetricOptions *m, int *tokenize_given,
                                char why[WHY_LEN])
{
    const char *a = argv[*i];
    if (!strcmp(a, "-lc") || !strcmp(a, "--lowercase")) {
        m->lowercase = 1;
        return 1;
    }
    int tok = !strcmp(a, "-tok") || !strcmp(a, "--tokenize");
    int pair = !strcmp(a, "-l") || !strcmp(a, "--language-pair");
    if (!tok && !pair) return 0;
    if (*i + 1 >= argc) {
        snprintf(why, WHY_LEN, "%s needs a value", a);
        return -1;
    }
    const char *value = argv[++*i];
    if (tok) {
        if (bleu_tokenize_parse(value, &m->tokenize)) {
            snprintf(why, WHY_LEN, "unknown tokeniser %.100s (13a, zh, char or none)", value);
            return -1;
        }
        *tokenize_given = 2;
        return 1;
    }
    BleuTokenize t;
    if (language_pair_tokenizer(value, &t)) {
        snprintf(why, WHY_LEN, "-l %.100s: expected SRC-TGT language codes, such as en-zh", value);
        return -1;
    }
    if (*tokenize_given != 2) {
        m->tokenize = t;
        *tokenize_given = 1;
    }
    return 1;
}

static int cmd_eval(int argc, char **argv)
{
    const char *model = NULL, *test = NULL;
    int json = 0, threads = 0, text_col = -1, label_col = -1, classifier_options = 0, translation_options = 0;
    TranslateOptions opt = {.length_penalty = 0.6f};
    EvalScoring scoring = {0};
    for (int i = 0; i < argc; i++) {
        int line_opt = parse_max_line_bytes(argc, argv, &i, &opt.lines);
        if (line_opt < 0) return usage_error(usage_eval, "eval: %s", max_line_usage);
        if (line_opt > 0) continue;
        int beam_opt = parse_beam_options(argc, argv, &i, &opt);
        if (beam_opt < 0) return usage_error(usage_eval, "eval: %s", beam_usage);
        translation_options |= beam_opt > 0;
        if (beam_opt > 0) continue;
        char why[WHY_LEN];
        int metric_opt = parse_metric_options(argc, argv, &i, &scoring.metric, &scoring.tokenize_given, why);
        if (metric_opt < 0) return usage_error(usage_eval, "eval: %s", why);
        translation_options |= metric_opt > 0;
        if (metric_opt > 0) continue;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--threads")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 0, 256, &threads))
                return usage_error(usage_eval, "eval: --threads needs a number from 0 to 256%s", "");
            i++;
        } else if (!strcmp(argv[i], "--text-column") || !strcmp(argv[i], "--label-column")) {
            int *col = argv[i][2] == 't' ? &text_col : &label_col, lo = argv[i][2] == 't' ? 1 : 0;
            if (i + 1 >= argc || parse_int(argv[i + 1], lo, 1000, col))
                return usage_error(usage_eval, "eval: %s needs a column number (1-based; --label-column 0: the last)",
                                   argv[i]);
            i++;
            classifier_options = 1;
        } else if (argv[i][0] == '-') return usage_error(usage_eval, "eval: unknown option %s", argv[i]);
        else if (!model) model = argv[i];
        else if (!test) test = argv[i];
        else return usage_error(usage_eval, "eval: unexpected argument %s", argv[i]);
    }
    if (!model || !test) return usage_error(usage_eval, "eval: needs MODEL.bin and TEST.tsv%s", "");
    blas_set_threads(threads);
    ModelFile mf;
    Error err;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    int classifier = model_classifies(&mf.model.dims);
    if (classifier ? translation_options : classifier_options) {
        modelfile_free(&mf);
        return usage_error(usage_eval, classifier ? "eval: %s is a classifier: --beam, --length-penalty and the BLEU "
                                                    "options apply only to translation models"
                                                  : "eval: %s is a translation model: --text-column and "
                                                    "--label-column apply only to classifiers", model);
    }
    if (classifier) {
        int status = eval_classifier(&mf, model, test, json, text_col, label_col, &opt.lines);
        modelfile_free(&mf);
        return status;
    }
    EvalResult res;
    int status = eval_run(&mf, model, test, &opt, &scoring, &res, &err) ? fail(&err) : 0;
    if (status == 0) eval_print(&res, json, stdout);
    modelfile_free(&mf);
    return status;
}

static int cmd_score(int argc, char **argv)
{
    const char *hyp = NULL, *ref = NULL, *extra = NULL;
    int tokenize_given = 0;
    ScoreOptions opt = {0};
    for (int i = 0; i < argc; i++) {
        char why[WHY_LEN];
        int metric_opt = parse_metric_options(argc, argv, &i, &opt.metric, &tokenize_given, why);
        if (metric_opt < 0) return usage_error(usage_score, "score: %s", why);
        if (metric_opt > 0) continue;
        int line_opt = parse_max_line_bytes(argc, argv, &i, &opt.lines);
        if (line_opt < 0) return usage_error(usage_score, "score: %s", max_line_usage);
        if (line_opt > 0) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--json")) opt.json = 1;
        else if (!strcmp(a, "--sentence")) opt.sentence = 1;
        else if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
            if (i + 1 >= argc) return usage_error(usage_score, "score: %s needs HYP.txt", a);
            if (hyp) return usage_error(usage_score, "score: -i given twice (one HYP.txt)%s", "");
            hyp = argv[++i];
        } else if (a[0] == '-' && a[1]) return usage_error(usage_score, "score: unknown option %s", a);
        else if (!ref) ref = a;
        else if (!extra) extra = a;
        else return usage_error(usage_score, "score: unexpected argument %s", a);
    }
    if (extra && !hyp)
        return usage_error(usage_score,
                           "score: two files and no -i: say which holds the translations, as sacreBLEU does: "
                           "nmt score REF.txt -i HYP.txt (before 0.2 nmt score took HYP REF; sacreBLEU would "
                           "read two files as two references)%s",
                           "");
    if (extra) return usage_error(usage_score, "score: unexpected argument %s (one REF.txt)", extra);
    if (!ref) return usage_error(usage_score, "score: needs REF.txt (and -i HYP.txt, or the translations on stdin)%s", "");
    if (!hyp) hyp = "-";
    if (!strcmp(hyp, "-") && !strcmp(ref, "-"))
        return usage_error(usage_score, "score: only one of REF.txt and HYP.txt can be - (standard input)%s", "");
    Error err;
    return score_run(hyp, ref, &opt, stdout, &err) ? fail(&err) : 0;
}

static int cmd_average(int argc, char **argv)
{
    const char *inputs[argc + 1], *out = NULL;
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) return usage_error(usage_average, "average: %s needs a FILE", argv[i]);
            if (out) return usage_error(usage_average, "average: -o given twice%s", "");
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(usage_average, "average: unknown option %s", argv[i]);
        } else {
            inputs[n++] = argv[i];
        }
    }
    if (n < 2) return usage_error(usage_average, "average: needs at least two MODEL.bin files%s", "");
    if (!out) return usage_error(usage_average, "average: needs -o AVERAGE.bin%s", "");
    Error err;
    if (average_models(inputs, n, out, &err)) return fail(&err);
    fprintf(stderr, "nmt: wrote %s, the average of %d models\n", out, n);
    return 0;
}

static int cmd_plot(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) return usage_error(usage_plot, "plot: %s needs a FILE", argv[i]);
            out = argv[++i];
        } else if (argv[i][0] == '-') return usage_error(usage_plot, "plot: unknown option %s", argv[i]);
        else if (!dir) dir = argv[i];
        else return usage_error(usage_plot, "plot: unexpected argument %s", argv[i]);
    }
    if (!dir) return usage_error(usage_plot, "plot: missing RUN_DIR%s", "");
    char warning[ERROR_LEN];
    Error err;
    int status = plot_training(dir, out, warning, sizeof warning, &err);
    if (warning[0]) fprintf(stderr, "nmt: warning: %s\n", warning);
    return status ? fail(&err) : 0;
}

static int cmd_bpe(int argc, char **argv)
{
    if (argc < 1) return usage_error(usage_bpe, "bpe: missing learn, apply or join%s", "");
    const char *action = argv[0], *out_path = NULL;
    int learn = !strcmp(action, "learn"), apply = !strcmp(action, "apply"), join = !strcmp(action, "join");
    if (!learn && !apply && !join) return usage_error(usage_bpe, "bpe: unknown action '%s' (learn, apply or join)", action);
    BpeToolOptions opt = {.merges = 8000};
    char *inputs[argc + 1];
    int n_inputs = 0;
    for (int i = 1; i < argc; i++) {
        int line_opt = parse_max_line_bytes(argc, argv, &i, &opt.lines);
        if (line_opt < 0) return usage_error(usage_bpe, "bpe: %s", max_line_usage);
        if (line_opt > 0) continue;
        if (learn && !strcmp(argv[i], "--merges")) {
            if (i + 1 >= argc || parse_int(argv[i + 1], 1, 1000000, &opt.merges))
                return usage_error(usage_bpe, "bpe learn: --merges needs a number from 1 to 1000000%s", "");
            i++;
        } else if (!join && !strcmp(argv[i], "--lowercase")) {
            opt.text.lowercase = 1;
        } else if (!join && !strcmp(argv[i], "--nfkc")) {
            opt.text.nfkc = 1;
        } else if (apply && !strcmp(argv[i], "--char")) {
            opt.chars = 1;
        } else if (apply && !strcmp(argv[i], "--target")) {
            opt.target = 1;
        } else if (!join && !strcmp(argv[i], "--codes-format")) {
            int format = i + 1 < argc ? bpe_format_from_name(argv[i + 1]) : -1;
            if (format < 0) return usage_error(usage_bpe, "bpe: --codes-format needs " BPE_FORMAT_NAMES "%s", "");
            opt.format = (BpeFormat)format;
            opt.format_given = 1;
            i++;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (i + 1 >= argc) return usage_error(usage_bpe, "bpe: %s needs a FILE", argv[i]);
            out_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(usage_bpe, "bpe: unknown option %s", argv[i]);
        } else if (apply && !opt.chars && !opt.codes) {
            opt.codes = argv[i];
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    /* apply --char takes no CODES: a first argument taken as CODES was an input. */
    if (apply && opt.chars && opt.codes) {
        memmove(inputs + 1, inputs, sizeof(char *) * n_inputs++);
        inputs[0] = (char *)opt.codes;
        opt.codes = NULL;
    }
    if (apply && !opt.chars && !opt.codes) return usage_error(usage_bpe, "bpe apply: missing CODES (or --char)%s", "");
    if (n_inputs == 0) inputs[n_inputs++] = "-";
    Error err;
    if (apply && bpe_tool_apply_usage(&opt, inputs, n_inputs, &err)) return usage_error(usage_bpe, "%s", err.msg);
    if (learn && bpe_tool_learn_usage(&opt, &err)) return usage_error(usage_bpe, "%s", err.msg);
    OutFile of = {.f = stdout};
    if (out_path && outfile_open(&of, out_path, &err)) return fail(&err);
    int status = learn ? bpe_tool_learn(inputs, n_inputs, of.f, &opt, &err)
               : apply ? bpe_tool_apply(inputs, n_inputs, of.f, &opt, &err)
                       : bpe_tool_join(inputs, n_inputs, of.f, &opt.lines, &err);
    status = output_done(&of, status, &err);
    return status ? fail(&err) : 0;
}

static int cmd_info(int argc, char **argv)
{
    const char *model = NULL;
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-') return usage_error(usage_info, "info: unknown option %s", argv[i]);
        else if (!model) model = argv[i];
        else return usage_error(usage_info, "info: unexpected argument %s", argv[i]);
    }
    if (!model) return usage_error(usage_info, "info: missing MODEL.bin%s", "");
    ModelFile mf;
    Error err;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    info_print(model, &mf, json, stdout);
    modelfile_free(&mf);
    return 0;
}

/* Standard output closed as coreutils' close_stdout closes it: a write that failed
 * (a full disk, /dev/full, a closed file descriptor) is an error, exit 1, even where the
 * command itself ends without looking (nmt info, eval, --help). Buffered output meets
 * the device only at this flush; without it, exit would drop the error. A command that
 * already failed (status non-zero) has said why: its status stands, and no second
 * message. (A pipe closed by its reader is not seen here: SIGPIPE ends nmt at the
 * write, as it ends cat; only where SIGPIPE is ignored does the write fail, EPIPE.) */
static int close_stdout(int status)
{
    errno = 0;
    int failed = fflush(stdout) != 0, reason = errno;
    failed |= ferror(stdout) != 0;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        reason = errno;
    }
    if (failed && status == 0) {
        fprintf(stderr, "nmt: write error: standard output%s%s\n", reason ? ": " : "", reason ? strerror(reason) : "");
        status = 1;
    }
    return status;
}

/* The subcommand argv[1] names, run; its exit status. */
static int run_command(int argc, char **argv)
{
    /* Under a memory limit too low for OpenBLAS's buffers its allocator spins forever
     * (blas.h): refused at once, and left by _exit, since exit would wait for
     * OpenBLAS's worker threads, which may be spinning already. */
    const char *products[] = {"train", "translate", "classify", "eval"};
    int uses_products = 0;
    for (size_t i = 0; argc >= 2 && i < sizeof products / sizeof products[0]; i++)
        uses_products |= !strcmp(argv[1], products[i]);
    Error limit_err;
    if (blas_check_memory_limit(uses_products, &limit_err)) {
        fail(&limit_err);
        _exit(1);
    }
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("nmt %s\n", NMT_VERSION);
        return 0;
    }
    struct {
        const char *name, *usage;
        int (*run)(int, char **);
    } commands[] = {
        {"train", usage_train, cmd_train},
        {"translate", usage_translate, cmd_translate},
        {"classify", usage_classify, cmd_classify},
        {"eval", usage_eval, cmd_eval},
        {"info", usage_info, cmd_info},
        {"score", usage_score, cmd_score},
        {"plot", usage_plot, cmd_plot},
        {"average", usage_average, cmd_average},
        {"bpe", usage_bpe, cmd_bpe},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name)) continue;
        if (wants_help(argc - 2, argv + 2)) {
            fputs(commands[i].usage, stdout);
            return 0;
        }
        return commands[i].run(argc - 2, argv + 2);
    }
    fprintf(stderr, "nmt: unknown command '%s'\n%s", cmd, usage_main);
    return 2;
}

int main(int argc, char **argv)
{
    blas_select_kernel(argv);
    return close_stdout(run_command(argc, argv));
}
