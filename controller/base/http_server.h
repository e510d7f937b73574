/*
 * A minimal HTTP/1.1 server on the libuv loop, for /healthz, /readyz and
 * /metrics: probes from the kubelet and scrapes from Prometheus, nothing
 * more.
 *
 * GET and HEAD only (anything else gets 405), one request per connection
 * (every response says Connection: close), request heads of at most
 * HTTP_SERVER_MAX_HEAD bytes (431 beyond), at most HTTP_SERVER_MAX_CONNECTIONS
 * connections at once (further ones are accepted and closed at once), and a
 * deadline per connection so that a slow or silent client cannot hold one
 * forever. The handler runs on the loop thread and sees only the path, with
 * any query string stripped; it must not block.
 *
 * Memory: the server allocates its own state (http_server_start() hands back
 * a pointer) and frees it, like every connection, only in libuv close
 * callbacks: after http_server_close() the loop must run until on_closed has
 * been called. Nothing is freed from inside a callback that may still be on
 * the stack.
 */
#ifndef DRASHIFT_HTTP_SERVER_H
#define DRASHIFT_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define HTTP_SERVER_MAX_HEAD 8192
#define HTTP_SERVER_MAX_CONNECTIONS 64
#define HTTP_SERVER_READ_TIMEOUT_MS 10000

typedef struct http_server http_server_t;

/*
 * Answers one GET or HEAD. path is NUL-terminated, starts with '/', query
 * string removed, not percent-decoded. On entry *status is 200, *body NULL,
 * *body_len 0 and *content_type "text/plain; charset=utf-8". The handler may
 * set a status from 200 to 599, a body from xmalloc (the server frees it,
 * also on HEAD, whose response carries only the length) and a content type
 * that outlives the call (a string literal). Returning non-zero means the
 * handler failed: the client gets 500 and any body set is freed.
 */
typedef int (*http_server_handler)(const char *path, void *data, int *status, char **body, size_t *body_len,
	const char **content_type);

/*
 * Listens on address: "127.0.0.1:8080", "[::1]:8080", or ":8080" for every
 * interface (IPv6 and IPv4, or IPv4 alone where the kernel has no IPv6).
 * Hosts are IP literals; port 0 picks a free port (see http_server_port).
 *
 * Returns 0 and sets *out, or a negative libuv error code with a message in
 * err (when errlen > 0), in which case the handler is never called and
 * *out is untouched. Even then a handle may still be closing: run the loop
 * before uv_loop_close(), as for any libuv handle.
 */
int http_server_start(uv_loop_t *loop, const char *address, http_server_handler handler, void *data,
	http_server_t **out, char *err, size_t errlen);

/* The bound port, the one the kernel picked when the address asked for 0. */
int http_server_port(const http_server_t *s);

/*
 * The deadline for each connection, in milliseconds (default
 * HTTP_SERVER_READ_TIMEOUT_MS): from accept to a complete request head, and
 * again from then to the response written and the client gone. It applies
 * to connections accepted after the call. ms 0 restores the default.
 */
void http_server_set_read_timeout(http_server_t *s, uint64_t ms);

/*
 * Stops listening and closes every connection, a response in flight
 * included. When the last handle has closed, the server's memory is freed and
 * then on_closed(data) is called (on_closed may be NULL). s must not be used
 * after this call. Calling it twice aborts. Safe to call from the handler.
 */
void http_server_close(http_server_t *s, void (*on_closed)(void *data), void *data);

/* ---- the request-head parser, exposed for tests and the fuzz target ---- */

typedef struct {
	const char *method;  /* points into the buffer, not NUL-terminated */
	size_t method_len;
	const char *target;  /* the request-target as sent */
	size_t target_len;
	const char *path;    /* the target's path: no scheme and authority, no query */
	size_t path_len;     /* 0 only for an absolute-form target without a path: means "/" */
	int version_minor;   /* HTTP/1.x */
	const char *host;    /* the Host header's value, NULL when absent */
	size_t host_len;
	size_t header_count;
} http_server_request_t;

#define HTTP_SERVER_PARSE_INCOMPLETE 0
#define HTTP_SERVER_PARSE_BAD (-1)         /* answer 400 */
#define HTTP_SERVER_PARSE_BAD_VERSION (-2) /* a version other than HTTP/1.x: answer 505 */

/*
 * Parses the request head at the start of buf[0..len) (no NUL needed):
 * request line, header fields, empty line. Lines end in CRLF or a bare LF
 * (RFC 9112 2.2); empty lines before the request line are skipped. Enforced:
 * a token method, a request-target in origin-form ("/p?q") or absolute-form
 * ("http://h/p") of visible ASCII without '#', HTTP/1.x, header names that
 * are tokens followed directly by ':', values without control characters
 * other than tab, no obsolete line folding, exactly one Host header in an
 * HTTP/1.1 request.
 *
 * Returns the length of the head, empty line included (> 0), with *out
 * filled; HTTP_SERVER_PARSE_INCOMPLETE when the empty line has not arrived
 * and every complete line so far is valid; or HTTP_SERVER_PARSE_BAD /
 * HTTP_SERVER_PARSE_BAD_VERSION as soon as a complete line is invalid. Never
 * reads outside buf[0..len). Heads longer than INT_MAX are reported BAD.
 */
int http_server_parse_request(const char *buf, size_t len, http_server_request_t *out);

#endif
