/* lines.h — reading text a line at a time with bounded memory: the one line reader
 * every reader of user input goes through (sentence-pair files, text to translate,
 * classify or segment, hypotheses and references, train.log), and the batches of
 * lines nmt translate and nmt classify work on.
 *
 * A line is at most a limit of bytes long (LINES_MAX_BYTES, 1 MiB, by default; the
 * command-line option --max-line-bytes or the config key data.max_line_bytes changes
 * it), not counting its line end: LF, or CR LF. However long a line of the input is,
 * memory does not grow with it: a longer line is reported as such (LINE_TOO_LONG), and
 * its rest is either dropped as it is read (the commands that answer each line: the
 * line is answered empty, with a warning) or left unread (the commands that refuse the
 * input: they stop at once, even on an endless line such as /dev/zero's). A read error
 * (EIO; EISDIR: a directory given as a file) is told from the end of the input, and
 * becomes the error "NAME: read error: REASON".
 *
 * Example:
 *   LineReader r;
 *   line_reader_init(&r, f, NULL);           // the default limit
 *   char *line = NULL;
 *   size_t cap = 0;
 *   ssize_t len;
 *   while ((len = line_read(&r, &line, &cap, 0)) >= 0)
 *       ... line r.number: line[0..len), with its LF if it has one ...
 *   if (len == LINE_TOO_LONG) lines_too_long(err, path, r.number, NULL);
 *   if (len == LINE_ERROR) lines_read_error(err, path);
 *   line_reader_free(&r);
 *   free(line);
 */
#ifndef LINES_H
#define LINES_H

#include <stdio.h>
#include <sys/types.h> /* ssize_t */

#include "base/util.h" /* defines: Error */

/* The longest line read by default, and the range --max-line-bytes and
 * data.max_line_bytes accept, in bytes. */
#define LINES_MAX_BYTES (1L << 20)
#define LINES_MAX_BYTES_MIN 1024L
#define LINES_MAX_BYTES_MAX (1L << 30)

/* A command's line limit and what changes it, for messages. All zero: LINES_MAX_BYTES
 * and "--max-line-bytes". */
typedef struct {
    long max_bytes;      /* 0: LINES_MAX_BYTES */
    const char *option;  /* NULL: "--max-line-bytes"; nmt train's is "data.max_line_bytes" */
} LineLimit;

/* limit's bytes (LINES_MAX_BYTES for NULL or 0). */
size_t lines_max(const LineLimit *limit);

/* What line_read returns instead of a length. */
enum {
    LINE_EOF = -1,      /* nothing left */
    LINE_ERROR = -2,    /* a read error: errno says which, ferror(in) is set */
    LINE_TOO_LONG = -3, /* a line of more than the limit's bytes before its line end */
};

/* One input read a line at a time. From a regular file (or an in-memory stream) it
 * reads a block at a time (fread) and finds the lines in the block (memchr), as fast as
 * copying the bytes; from a pipe, socket or terminal it takes what has arrived
 * (read(2) on the descriptor, past stdio's buffer), so that each line is answered as
 * soon as it comes (nmt translate in a pipeline). Either way it takes the input over:
 * nothing else may read `in` while it does, nor before it from a pipe or a terminal
 * through stdio (what stdio buffered would be skipped). */
typedef struct {
    FILE *in;
    size_t max;      /* the limit, in bytes */
    long number;     /* lines read so far: the number of the one line_read returned */
    char *block;     /* read and not yet returned: block[at..end) */
    size_t at, end;
    int by_line;     /* fill the block a line at a time (pipes, terminals) */
    int eof;
} LineReader;

void line_reader_init(LineReader *r, FILE *in, const LineLimit *limit);
/* Frees what the reader holds; in stays open. */
void line_reader_free(LineReader *r);

/* The next line into *buf (malloc'd, *cap bytes; NULL and 0 to start), NUL-terminated
 * and with its LF if it has one, as getline gives it: returns its length (a NUL byte in
 * the line is kept; the length tells it from the end), or one of the codes above. A CR
 * before the LF, or at the very end of the input, is kept and not counted in the limit;
 * a last line without a LF is a line. *buf never grows beyond the limit + 3 bytes. On
 * LINE_TOO_LONG r->number is that line's and *buf is ""; with skip the rest of the line,
 * up to and with its LF, has been read and dropped (the next call reads the next line;
 * LINE_ERROR if reading the rest failed), without skip the reader is done. */
ssize_t line_read(LineReader *r, char **buf, size_t *cap, int skip);

/* 1 if line_read would return without waiting for more input: a regular file, a whole
 * line already read ahead, or (pipes, terminals) bytes or the end waiting on the
 * descriptor (poll); 0 if it would wait for a writer. Never blocks. */
int line_reader_ready(const LineReader *r);

/* "NAME line N: longer than MAX bytes (the limit; OPTION raises it)" into err; -1. */
int lines_too_long(Error *err, const char *name, long number, const LineLimit *limit);
/* "NAME: read error: REASON" (strerror(errno), EIO if errno is 0) into err; -1. */
int lines_read_error(Error *err, const char *name);

/* Reads the whole of path as line_read reads it, for the lengths of its lines only: 0
 * when every line is within the limit, else -1 with lines_too_long's or
 * lines_read_error's message, or "PATH: REASON" when it cannot be opened. What cannot
 * be read twice (a FIFO, a socket, a terminal) is left alone: 0. nmt train checks its
 * data with it before it writes anything; it takes a small part of the time parsing the
 * file does (a block at a time, memchr). */
int lines_check_file(const char *path, const LineLimit *limit, Error *err);

/* Called with lines[0..n-1], lines first_number.. (1-based) of the input; warned[i] is
 * 1 where the reader passes line i empty and has already said why (over the limit, or
 * a NUL byte with a nul_note). Returns 0, or -1 with err to stop reading. */
typedef int (*LineBatchFn)(void *ctx, char **lines, const char *warned, int n, long first_number, Error *err);

/* Reads in (in_name in messages) to its end, batch lines at a time (the last batch may
 * be shorter), through fn; what names the job ("translate") in the model-file message.
 * Each line is passed without its line end ("\n" or "\r\n"). A line over the limit is
 * passed empty, with a warning "NAME line N: longer than MAX bytes (the limit; OPTION
 * raises it); EMPTY_NOTE"; so is a line holding a NUL byte, with the warning "NAME line
 * N: NUL byte; NUL_NOTE" (nul_note NULL: without a warning, the caller says it). An nmt
 * model file given as text (its magic on line 1) is refused: the commands take one
 * MODEL.bin first, and a second one among the inputs is a mistake, not text. 0 with
 * *count the lines read, or -1 with err: fn's error, a model file, a read error. Memory:
 * batch lines of at most the limit each. */
int lines_read_batches(FILE *in, const char *in_name, int batch, const char *what, const LineLimit *limit,
                       const char *empty_note, const char *nul_note, LineBatchFn fn, void *ctx, long *count,
                       Error *err);

/* As lines_read_batches, for readers that look ahead (nmt translate sorts a window of
 * lines by length into batches): fn gets the lines read so far, at most `window`, as
 * soon as they hold window_bytes bytes or more (line ends not counted), or no further
 * line has arrived yet from a pipe or terminal (line_reader_ready): a program that
 * writes a line and waits for its answer gets it, a file or a fast pipe fills whole
 * windows. Memory: window lines of at most the limit each. */
int lines_read_windows(FILE *in, const char *in_name, int window, size_t window_bytes, const char *what,
                       const LineLimit *limit, const char *empty_note, const char *nul_note, LineBatchFn fn,
                       void *ctx, long *count, Error *err);
#endif
