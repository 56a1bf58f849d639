/* http.c — nmt serve over libmicrohttpd (http.h). */
#include "serve/http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

/* ---------------------------------------------------------------- the stop signal */

/* SIGTERM and SIGINT write a byte here; server_run waits on the other end. A handler
 * can reach only file-scope state, and write(2) is async-signal-safe; a pipe, unlike a
 * blocked signal and sigwait, works whatever thread the signal lands on (OpenBLAS
 * starts threads of its own, with every signal unblocked). */
static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(stop_pipe[1], &b, 1) < 0) { /* full: a stop is already pending */ }
    errno = saved;
}

/* ---------------------------------------------------------------- one request */

/* What the server knows of a request, from its first line to its end: its body as it
 * comes, its answer's status and size for the log. */
typedef struct {
    double start;
    char path[128];        /* the request's target as sent (query included), cut: for the log */
    char method[16];
    char *body;
    size_t len, cap;
    int too_large;         /* the body passed max_body_bytes: dropped as it comes */
    int handled;           /* the access handler has been called */
    int status, lines;
    size_t bytes;
} Exchange;

typedef struct {
    const Api *api;
    const ServerOptions *o;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int in_flight;         /* requests from their first line to their end */
    int stopping;
} Server;

/* MHD_OPTION_URI_LOG_CALLBACK: the first thing known of every request (even one the
 * HTTP parser then refuses), so that every one gets its line in the log. */
static void *request_begins(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    Server *s = cls;
    Exchange *x = xcalloc(1, sizeof *x);
    x->start = now_seconds();
    snprintf(x->path, sizeof x->path, "%s", uri ? uri : "-");
    snprintf(x->method, sizeof x->method, "-");
    pthread_mutex_lock(&s->lock);
    s->in_flight++;
    pthread_mutex_unlock(&s->lock);
    return x;
}

static const char *end_reason(enum MHD_RequestTerminationCode why)
{
    switch (why) {
    case MHD_REQUEST_TERMINATED_COMPLETED_OK: return NULL;
    case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "closed: timeout";
    case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "closed: server stopping";
    case MHD_REQUEST_TERMINATED_READ_ERROR: return "closed: read error";
    case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "closed: client gone";
    default: return "closed: error";
    }
}

/* The client's address as text. */
static void client_address(struct MHD_Connection *c, char *out, size_t len)
{
    snprintf(out, len, "-");
    const union MHD_ConnectionInfo *ci = c ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
    if (!ci || !ci->client_addr) return;
    socklen_t size = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(ci->client_addr, size, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0) snprintf(out, len, "-");
}

/* MHD_OPTION_NOTIFY_COMPLETED: the request's line in the access log, one write. */
static void request_ends(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    Server *s = cls;
    Exchange *x = *con_cls;
    if (!x) return;
    *con_cls = NULL;
    char when[32], client[64], line[512], status[8] = "-";
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    client_address(c, client, sizeof client);
    if (x->status) snprintf(status, sizeof status, "%d", x->status);
    const char *reason = end_reason(why);
    int n = snprintf(line, sizeof line, "nmt: %s %s \"%s %s\" %s %zu B %.1f ms", when, client, x->method, x->path,
                     status, x->bytes, 1e3 * (now_seconds() - x->start));
    if (x->lines && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - n, " %d line%s", x->lines, x->lines == 1 ? "" : "s");
    if (reason && n < (int)sizeof line) n += snprintf(line + n, sizeof line - n, " %s", reason);
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) { /* nowhere left to say it */ }
    free(x->body);
    free(x);
    pthread_mutex_lock(&s->lock);
    s->in_flight--;
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
}

/* Queues reply on c with nmt's headers; frees or hands over its body. */
static enum MHD_Result send_reply(Server *s, struct MHD_Connection *c, Exchange *x, Reply *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, r->fixed ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        reply_free(r);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->fixed)  /* the page: nothing but itself and this server's endpoints */
        MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                                "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'");
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->retry_after) {
        char v[16];
        snprintf(v, sizeof v, "%d", r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    pthread_mutex_lock(&s->lock);
    int stopping = s->stopping;
    pthread_mutex_unlock(&s->lock);
    if (stopping) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    x->status = r->status;
    x->bytes = r->len;
    x->lines = r->lines;
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result send_error(Server *s, struct MHD_Connection *c, Exchange *x, int status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static enum MHD_Result send_error(Server *s, struct MHD_Connection *c, Exchange *x, int status, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    Reply r = {0};
    api_error(&r, status, msg);
    if (status == 503) r.retry_after = 1;
    return send_reply(s, c, x, &r);
}

/* The access handler: called when the headers are in, for each piece of the body, and
 * once the body is all in (*size 0), when the answer is made. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    Server *s = cls;
    Exchange *x = *con_cls;
    if (!x) return MHD_NO;  /* request_begins always makes one */
    if (!x->handled) {
        x->handled = 1;
        snprintf(x->method, sizeof x->method, "%s", method);
        pthread_mutex_lock(&s->lock);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping) return send_error(s, c, x, 503, "the server is stopping");
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length && strtod(length, NULL) > (double)s->o->max_body_bytes)
            return send_error(s, c, x, 413, "the body is %s bytes; at most %ld (nmt serve --max-body-bytes)", length,
                              s->o->max_body_bytes);
        return MHD_YES;
    }
    if (*size > 0) {
        /* A client that trickles its body is cut off once the request's time is up. */
        if (now_seconds() - x->start > s->o->timeout_s) return MHD_NO;
        if (!x->too_large && x->len + *size > (size_t)s->o->max_body_bytes) {
            x->too_large = 1;
            free(x->body);
            x->body = NULL;
        }
        if (!x->too_large) {
            if (x->len + *size > x->cap) {
                x->cap = 2 * (x->len + *size);
                if (x->cap > (size_t)s->o->max_body_bytes) x->cap = (size_t)s->o->max_body_bytes;
                x->body = xrealloc(x->body, x->cap);
            }
            memcpy(x->body + x->len, data, *size);
        }
        x->len += *size;
        *size = 0;
        return MHD_YES;
    }
    if (x->too_large)
        return send_error(s, c, x, 413, "the body is longer than %ld bytes (nmt serve --max-body-bytes)",
                          s->o->max_body_bytes);
    Reply r;
    api_respond(s->api, method, url, x->body, x->len, &r);
    return send_reply(s, c, x, &r);
}

/* libmicrohttpd's own messages (a socket error, a thread it could not start). */
static void http_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    fprintf(stderr, "nmt: serve: libmicrohttpd: %s\n", msg);
}

/* ---------------------------------------------------------------- listening */

int listen_address_parse(const char *s, char *host, size_t host_len, int *port, Error *err)
{
    const char *colon = strrchr(s, ':'), *h = s;
    size_t n = colon ? (size_t)(colon - s) : 0;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return error_set(err, "--listen %s: expected [IPV6]:PORT, such as [::1]:8080", s);
        h = s + 1;
        n = (size_t)(close - h);
        colon = close + 1;
    }
    if (!colon || n == 0 || n >= host_len)
        return error_set(err, "--listen %s: expected ADDR:PORT, such as 127.0.0.1:8080", s);
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || errno || p < 0 || p > 65535)
        return error_set(err, "--listen %s: the port must be a number from 0 to 65535 (0: any free port)", s);
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int)p;
    return 0;
}

/* Waits until no request is in flight, or deadline (now_seconds). */
static void wait_idle(Server *s, double deadline)
{
    pthread_mutex_lock(&s->lock);
    while (s->in_flight > 0 && now_seconds() < deadline) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000L;  /* re-check the deadline every 0.1 s */
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->idle, &s->lock, &t);
    }
    pthread_mutex_unlock(&s->lock);
}

int server_run(const Api *api, const ServerOptions *o, FILE *announce, Error *err)
{
    char host[256], service[16];
    int port;
    if (listen_address_parse(o->listen, host, sizeof host, &port, err)) return -1;
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
    int gai = getaddrinfo(host, service, &hints, &ai);
    if (gai != 0) return error_set(err, "--listen %s: %s", o->listen, gai_strerror(gai));
    if (pipe(stop_pipe) != 0) {
        freeaddrinfo(ai);
        return error_set(err, "serve: cannot make a pipe: %s", strerror(errno));
    }
    fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction act = {.sa_handler = on_stop_signal}, old_pipe;
    sigemptyset(&act.sa_mask);
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    /* A client gone mid-answer is an error of that write, not the end of the server. */
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe);

    Server s = {.api = api, .o = o};
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.idle, NULL);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL, MHD_OPTION_SOCK_ADDR,
        ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)o->timeout_s, MHD_OPTION_URI_LOG_CALLBACK, request_begins, &s, MHD_OPTION_NOTIFY_COMPLETED,
        request_ends, &s, MHD_OPTION_END);
    int status = 0;
    if (!d) {
        status = error_set(err, "--listen %s: cannot listen there (in use, or not an address of this machine?)",
                           o->listen);
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        int bound = info ? info->port : port;
        int v6 = ai->ai_family == AF_INET6;
        fprintf(announce, "http://%s%s%s:%d/\n", v6 ? "[" : "", host, v6 ? "]" : "", bound);
        fflush(announce);
        fprintf(stderr, "nmt: serve: listening on http://%s%s%s:%d/ (SIGTERM or Ctrl-C stops)\n", v6 ? "[" : "", host,
                v6 ? "]" : "", bound);
        unsigned char sig = 0;
        while (read(stop_pipe[0], &sig, 1) < 0 && errno == EINTR) {
        }
        fprintf(stderr, "nmt: serve: %s: finishing the requests in flight, then stopping\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM");
        MHD_socket listener = MHD_quiesce_daemon(d);
        pthread_mutex_lock(&s.lock);
        s.stopping = 1;
        pthread_mutex_unlock(&s.lock);
        /* Its body's time, a worker's wait, and its decoding, which a request's limits
         * bound; a request still not done after that is not waited for. */
        wait_idle(&s, now_seconds() + 2.0 * o->timeout_s + 5);
        MHD_stop_daemon(d);
        if (listener != MHD_INVALID_SOCKET) close(listener);
        fprintf(stderr, "nmt: serve: stopped\n");
    }
    freeaddrinfo(ai);
    /* Not the old handlers back: a second SIGTERM or SIGINT, sent while this one was
     * being answered (GNU timeout signals its child and then the child's process group;
     * a second Ctrl-C), must not turn a clean stop into death by that signal (exit 143
     * or 130). The caller exits next. Ignored before the pipe closes, so the handler
     * never writes to a closed (or reused) descriptor. */
    struct sigaction ignore_stop = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore_stop.sa_mask);
    sigaction(SIGTERM, &ignore_stop, NULL);
    sigaction(SIGINT, &ignore_stop, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    stop_pipe[0] = stop_pipe[1] = -1;
    pthread_cond_destroy(&s.idle);
    pthread_mutex_destroy(&s.lock);
    return status;
}
