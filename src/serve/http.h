/* http.h — nmt serve's HTTP/1.1 side, over GNU libmicrohttpd: listening, reading each
 * request whole and within its limits, handing it to the endpoints (api.h), writing
 * the answer, the access log, and a clean stop on SIGTERM or SIGINT.
 *
 * libmicrohttpd runs a thread per connection (MHD_USE_THREAD_PER_CONNECTION): the
 * endpoints may block (on a worker, on decoding) without holding up other clients,
 * and the connection limit bounds the threads. Its parser does the HTTP: request
 * lines, headers, chunked bodies, keep-alive, Expect: 100-continue, HEAD.
 *
 * The limits, and what a client that breaks one gets:
 *   max_body_bytes   a body longer than this: 413, at once when Content-Length says so
 *                    (the body is not read), else once the body has been read past it
 *                    (and dropped as it comes); the connection is closed after
 *   max_connections  connections open at once; one more is closed as it is accepted
 *   timeout_s        a connection idle this long (a client that stops sending, or
 *                    stops reading the answer) is closed; a request whose body is not
 *                    all in after timeout_s is closed too (a client that trickles
 *                    it); and a request that finds no worker free within timeout_s
 *                    gets 503 (api.h: wait_s)
 * The header block is bounded by libmicrohttpd's memory pool of 32 KiB per
 * connection (431 or 413 from libmicrohttpd itself). A request holds a worker only
 * from the end of its body to the end of its decoding (engine.h), never while its
 * client sends or reads.
 *
 * Access log: one line on stderr per request, when it ends:
 *   nmt: 2026-11-26T14:02:07Z 127.0.0.1 "POST /translate" 200 1834 B 12.4 ms 3 lines
 * (the status is "-" and the end says why for a request that ended without an answer:
 * "closed: client gone", "closed: timeout", ...).
 *
 * Stopping: SIGTERM or SIGINT stops accepting connections; the requests in flight get
 * their answers (a new request on a kept-alive connection gets 503 and
 * Connection: close); then the connections are closed and server_run returns 0. A
 * request that is still not done after timeout_s plus its decoding is not waited for.
 * server_run leaves SIGTERM and SIGINT ignored when it returns (a second one, sent while
 * the first was being answered, must not end the process by that signal): the caller
 * is expected to exit.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stdio.h>

#include "base/util.h"  /* defines: Error */
#include "serve/api.h"  /* defines: Api */

typedef struct {
    const char *listen;    /* "ADDR:PORT", "[IPV6]:PORT", "localhost:PORT"; port 0: any free one */
    long max_body_bytes;
    int max_connections;
    int timeout_s;
} ServerOptions;

/* Listens on o->listen and serves api until SIGTERM or SIGINT (above). Once listening,
 * writes the address ("http://127.0.0.1:8080/", the port chosen when 0 was asked) and a
 * newline to announce, flushed. Returns 0 after a clean stop, or -1 with err: the
 * address cannot be read or listened on. */
int server_run(const Api *api, const ServerOptions *o, FILE *announce, Error *err);

/* Splits "HOST:PORT" / "[HOST]:PORT" into host[host_len] and *port (0 .. 65535). 0, or -1
 * with err saying what is wrong. */
int listen_address_parse(const char *s, char *host, size_t host_len, int *port, Error *err);
#endif
