/* main.c — the nmt command line: the table of commands, the global options (--help,
 * --version), and the exit status. Each command parses its own options by its own
 * table (cli/cmd_NAME.c, cli/options.h).
 *
 * Exit codes: 0 success; 1 the job failed (bad input file, unreadable model, write
 * error); 2 usage error (unknown command or option, a bad value, a --set that is
 * wrong; one line on stderr, options.h: usage_error); 3 out of memory; 130 and 143:
 * nmt train stopped by SIGINT or SIGTERM (128 + the signal's number, as a shell
 * reports a process the signal killed) after writing a checkpoint to resume from.
 * In a job of several MPI ranks (nmt-mpi) an error on any rank ends them all, exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/commands.h" /* defines: Command, the commands' tables and run functions, fail */
#include "kernels/blas.h" /* defines: blas_select_kernel, blas_check_memory_limit */

#define NMT_VERSION "0.4.0"

/* Every command: its table (name, options, help), its run function, whether it uses
 * OpenBLAS, and its line(s) in nmt --help. */
static const Command commands[] = {
    {&train_options, cmd_train, 1,
     "train CONFIG.json            build vocabularies, train, write checkpoints and model.bin\n"
     "train CONFIG.json --resume   go on with an interrupted run from its newest checkpoint"},
    {&translate_options, cmd_translate, 1, "translate MODEL.bin          translate stdin to stdout, one line per line"},
    {&classify_options, cmd_classify, 1, "classify MODEL.bin           a classifier's label for each line of stdin"},
    {&eval_options, cmd_eval, 1,
     "eval MODEL.bin TEST.tsv      BLEU, chrF and perplexity on held-out sentence pairs;\n"
     "                             a classifier's accuracy, F1 and confusion matrix"},
    {&serve_options, cmd_serve, 1,
     "serve MODEL.bin ...          translate over HTTP, with a page to look into the model"},
    {&info_options, cmd_info, 0, "info MODEL.bin               what a model or checkpoint file holds"},
    {&score_options, cmd_score, 0,
     "score REF.txt -i HYP.txt     BLEU and chrF of translations against references (sacreBLEU)"},
    {&plot_options, cmd_plot, 0, "plot RUN_DIR                 SVG chart of a run's training and validation loss and BLEU"},
    {&average_options, cmd_average, 0, "average A.bin B.bin -o OUT   the mean of several checkpoints' weights, as a model file"},
    {&quantize_options, cmd_quantize, 0, "quantize MODEL.bin -o OUT    the model with int8 weights: a quarter of the file, faster"},
    {&shortlist_options, cmd_shortlist, 0,
     "shortlist MODEL.bin PAIRS.tsv  the target words to score for each source word (-o FILE)"},
    {&bpe_options, cmd_bpe, 0, "bpe learn|apply|join         subword segmentation on its own, for pipelines"},
};

const Command *cli_commands(int *n)
{
    *n = sizeof commands / sizeof commands[0];
    return commands;
}

static void main_help(FILE *out)
{
    fputs("usage: nmt COMMAND [options]\n"
          "\n"
          "Neural machine translation (attention encoder-decoders, the Transformer) and sentence\n"
          "classification (an attention-pooled recurrent encoder), in C.\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        for (const char *line = commands[i].summary; line;) {
            const char *end = strchr(line, '\n');
            fprintf(out, "  %.*s\n", end ? (int)(end - line) : (int)strlen(line), line);
            line = end ? end + 1 : NULL;
        }
    fputs("\n"
          "  nmt COMMAND --help           options of a command\n"
          "  nmt --version\n"
          "\n"
          "An option's value follows it (--beam 5) or an '=' (--beam=5); -- ends the options\n"
          "(nmt translate MODEL.bin -- -notes.txt). Exit status: 0 done, 1 the job failed (the\n"
          "message says why), 2 a usage error, 130 or 143 training stopped by a signal.\n"
          "\n"
          "nmt runs on CPUs only (OpenBLAS; it has no GPU code). To train or translate on a\n"
          "GPU, use a GPU toolkit: OpenNMT-py, Marian or fairseq.\n",
          out);
}

/* nmt --help-man (for scripts/docs/man.sh): every command's options as the man page's
 * entries. 0, or 1 when an option is listed nowhere. */
static int help_man(void)
{
    Error err;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (options_man(commands[i].options, stdout, &err)) return fail(&err);
    return 0;
}

/* Parses the command's arguments by its table and runs it; its exit status. */
static int run_command(const Command *c, int argc, char **argv)
{
    const OptionTable *t = c->options;
    if (options_want_help(argc, argv)) {
        options_help(t, stdout);
        return 0;
    }
    void *args = xmalloc(t->args_size);
    Parsed p;
    Error err;
    int status = options_parse(t, argc, argv, args, &p, &err) ? usage_error(t, "%s", err.msg) : c->run(args, &p);
    options_free(t, args, &p);
    free(args);
    return status;
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

/* The command argv[1] names, run; the exit status. */
static int run_main(int argc, char **argv)
{
    const Command *c = NULL;
    for (size_t i = 0; argc >= 2 && i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].options->name)) c = &commands[i];
    /* Under a memory limit too low for OpenBLAS's buffers its allocator spins forever
     * (blas.h): refused at once, and left by _exit, since exit would wait for
     * OpenBLAS's worker threads, which may be spinning already. */
    Error limit_err;
    if (blas_check_memory_limit(c && c->uses_blas, &limit_err)) {
        fail(&limit_err);
        _exit(1);
    }
    if (argc < 2) {
        fputs("nmt: missing COMMAND (", stderr);
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", commands[i].options->name);
        fputs("); see 'nmt --help'\n", stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        main_help(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("nmt %s\n", NMT_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--help-man")) return help_man();
    if (c) return run_command(c, argc - 2, argv + 2);
    fprintf(stderr, "nmt: unknown %s '%s'; see 'nmt --help'\n", cmd[0] == '-' ? "option" : "command", cmd);
    return 2;
}

/* A standard descriptor closed when nmt starts (nmt ... <&- >&- 2>&-, as cron and
 * daemons may start it) would be the number the next open() returns: the -o file's
 * temporary, train.log or a model would then receive messages meant for stderr, or be
 * read as stdin. Each closed one is taken at once by /dev/null opened the other way
 * round (stdin for writing, stdout and stderr for reading), so that nothing else can
 * take it, and reading or writing it still fails as on a closed descriptor (EBADF):
 * nmt translate >&- still reports "write error: standard output". */
static void hold_standard_descriptors(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got < 0) got = open("/", O_RDONLY | O_DIRECTORY);  /* no /dev/null (a bare chroot) */
        if (got >= 0 && got != fd) {  /* cannot happen: open takes the lowest free number */
            dup2(got, fd);
            close(got);
        }
    }
}

/* glibc maps a block of 128 KiB or more on its own and unmaps it when freed, but raises
 * that threshold to the size of each such block freed (up to 32 MiB): after a model
 * file's buffer is freed, the decoders' buffers come from the heap and stay resident
 * when freed (measured: 20 MB more peak memory to translate 1,000 lines with a
 * Transformer). One fixed threshold keeps big buffers mapped, at no measured cost in
 * speed (BENCHMARKS.md, int8 weights). */
static void malloc_settings(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

int main(int argc, char **argv)
{
    malloc_settings();
    hold_standard_descriptors();
    blas_select_kernel(argv);
    return close_stdout(run_main(argc, argv));
}
