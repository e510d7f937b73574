/*
 * The probe and metrics HTTP server, over real sockets: the server runs on a
 * libuv loop in the test's main thread while a plain blocking client runs in
 * a second thread. The client only records what it saw; every assertion is
 * made in the main thread after the client has been joined, and every test
 * ends with the server closed and uv_loop_close() returning 0, which proves
 * that no handle (and so no connection) was left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "http_server.h"
#include "xalloc.h"

#define MAX_RESULTS 80
#define MAX_SEEN 16
#define BIG_BODY (8u << 20)

typedef struct test_ctx test_ctx_t;

typedef struct {
	char *data;       /* everything read until EOF, NUL-terminated */
	size_t len;
	bool reset;       /* ended by ECONNRESET rather than EOF */
	bool timed_out;   /* nothing for the client's 5 s receive timeout */
	double ms;        /* from the request being sent (or connect) to EOF */
} client_result_t;

struct test_ctx {
	uv_loop_t loop;
	uv_async_t client_done;
	http_server_t *server;
	int port;
	uint64_t read_timeout_ms;
	void (*client)(test_ctx_t *t);
	bool server_closed;
	bool closed_by_handler;

	/* Written by the client thread, read after pthread_join. */
	client_result_t results[MAX_RESULTS];
	int nresults;
	int connect_errors;

	/* Written by the handler, on the loop thread. */
	char *seen[MAX_SEEN];
	int handler_calls;
};

/* ---- server side (loop thread) ------------------------------------------- */

static void on_server_closed(void *data)
{
	test_ctx_t *t = data;
	t->server_closed = true;
}

static int test_handler(const char *path, void *data, int *status, char **body, size_t *body_len,
	const char **content_type)
{
	test_ctx_t *t = data;
	if (t->handler_calls < MAX_SEEN)
		t->seen[t->handler_calls] = xstrdup(path);
	t->handler_calls++;
	const char *text;
	if (strcmp(path, "/healthz") == 0) {
		text = "ok\n";
	} else if (strcmp(path, "/metrics") == 0) {
		text = "up 1\n";
		*content_type = "text/plain; version=0.0.4; charset=utf-8";
	} else if (strcmp(path, "/big") == 0) {
		/* Far more than the socket buffers hold: the write is still pending for a while. */
		*body_len = BIG_BODY;
		*body = xmalloc(BIG_BODY);
		memset(*body, 'x', BIG_BODY);
		return 0;
	} else if (strcmp(path, "/fail") == 0) {
		*body = xstrdup("must be freed by the server");
		*body_len = strlen(*body);
		return -1;
	} else if (strcmp(path, "/close") == 0) {
		t->closed_by_handler = true;
		http_server_close(t->server, on_server_closed, t);
		text = "bye\n";
	} else {
		*status = 404;
		text = "not found\n";
	}
	*body = xstrdup(text);
	*body_len = strlen(text);
	return 0;
}

static void on_client_done(uv_async_t *async)
{
	test_ctx_t *t = async->data;
	uv_close((uv_handle_t *)async, NULL);
	if (!t->closed_by_handler)
		http_server_close(t->server, on_server_closed, t);
}

static void *client_main(void *arg)
{
	test_ctx_t *t = arg;
	t->client(t);
	uv_async_send(&t->client_done);
	return NULL;
}

/*
 * Starts the server on 127.0.0.1:0, runs client in a thread, runs the loop
 * until the server is closed and every handle is gone.
 */
static test_ctx_t *run_with_client(void (*client)(test_ctx_t *t), uint64_t read_timeout_ms)
{
	test_ctx_t *t = xcalloc(1, sizeof(*t));
	t->client = client;
	assert_int_equal(uv_loop_init(&t->loop), 0);
	char err[256];
	assert_int_equal(http_server_start(&t->loop, "127.0.0.1:0", test_handler, t, &t->server, err, sizeof(err)), 0);
	if (read_timeout_ms > 0)
		http_server_set_read_timeout(t->server, read_timeout_ms);
	t->read_timeout_ms = read_timeout_ms;
	t->port = http_server_port(t->server);
	assert_true(t->port > 0);
	assert_int_equal(uv_async_init(&t->loop, &t->client_done, on_client_done), 0);
	t->client_done.data = t;
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, client_main, t), 0);
	assert_int_equal(uv_run(&t->loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_true(t->server_closed);
	assert_int_equal(uv_loop_close(&t->loop), 0);
	assert_int_equal(t->connect_errors, 0);
	return t;
}

static void ctx_free(test_ctx_t *t)
{
	for (int i = 0; i < t->nresults; i++)
		free(t->results[i].data);
	for (int i = 0; i < t->handler_calls && i < MAX_SEEN; i++)
		free(t->seen[i]);
	free(t);
}

/* ---- client side (client thread): record, never assert ------------------- */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int client_connect(test_ctx_t *t)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		t->connect_errors++;
		return -1;
	}
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)t->port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		t->connect_errors++;
		close(fd);
		return -1;
	}
	return fd;
}

static void client_send(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n <= 0)
			return; /* the server may legitimately stop reading (431) */
		data += n;
		len -= (size_t)n;
	}
}

/* Reads until EOF into the next result slot; start is when the clock began. */
static client_result_t *client_read_all(test_ctx_t *t, int fd, double start)
{
	client_result_t *r = &t->results[t->nresults++];
	size_t cap = 4096;
	r->data = xmalloc(cap);
	for (;;) {
		if (r->len + 1 == cap) {
			cap *= 2;
			r->data = xrealloc(r->data, cap);
		}
		ssize_t n = recv(fd, r->data + r->len, cap - r->len - 1, 0);
		if (n > 0) {
			r->len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET)
			r->reset = true;
		else if (n < 0)
			r->timed_out = true;
		break;
	}
	r->data[r->len] = '\0';
	r->ms = now_ms() - start;
	return r;
}

static void client_exchange(test_ctx_t *t, const char *request, size_t len)
{
	int fd = client_connect(t);
	if (fd < 0)
		return;
	double start = now_ms();
	client_send(fd, request, len);
	client_read_all(t, fd, start);
	close(fd);
}

#define EXCHANGE(t, literal) client_exchange((t), (literal), sizeof(literal) - 1)

/* ---- assertions (main thread) -------------------------------------------- */

/* Compares a response with expected, which has no Date header: the real one must be there, well-formed. */
static void assert_response(const client_result_t *r, const char *expected)
{
	assert_false(r->timed_out);
	const char *date = strstr(r->data, "\r\nDate: ");
	assert_non_null(date);
	date += 2;
	const char *end = strstr(date, "\r\n");
	assert_non_null(end);
	/* "Date: " + "Sun, 06 Nov 1994 08:49:37 GMT" */
	assert_int_equal(end - date, 6 + 29);
	assert_memory_equal(end - 4, " GMT", 4);
	char *without = xasprintf("%.*s%s", (int)(date - r->data), r->data, end + 2);
	assert_string_equal(without, expected);
	free(without);
}

static void assert_status(const client_result_t *r, const char *status_line)
{
	assert_false(r->timed_out);
	size_t n = strlen(status_line);
	if (r->len < n || memcmp(r->data, status_line, n) != 0)
		fail_msg("expected \"%s\", got \"%.*s\"", status_line, (int)(r->len < 80 ? r->len : 80), r->data);
}

/* ---- tests --------------------------------------------------------------- */

static void client_gets(test_ctx_t *t)
{
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: kube-probe/1.29\r\nAccept: */*\r\n\r\n");
	EXCHANGE(t, "GET /metrics HTTP/1.0\r\n\r\n");
	EXCHANGE(t, "GET /healthz HTTP/1.1\nHost: x\n\n"); /* bare LF line ends */
}

static void test_get_returns_handler_body(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_gets, 0);
	assert_int_equal(t->nresults, 3);
	assert_response(&t->results[0],
		"HTTP/1.1 200 OK\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 3\r\n"
		"Connection: close\r\n"
		"\r\n"
		"ok\n");
	assert_response(&t->results[1],
		"HTTP/1.1 200 OK\r\n"
		"Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		"Content-Length: 5\r\n"
		"Connection: close\r\n"
		"\r\n"
		"up 1\n");
	assert_status(&t->results[2], "HTTP/1.1 200 OK\r\n");
	assert_int_equal(t->handler_calls, 3);
	ctx_free(t);
}

static void client_queries(test_ctx_t *t)
{
	EXCHANGE(t, "GET /healthz?verbose=1&x=%20 HTTP/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET http://127.0.0.1:8080/metrics?name[]=up HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
	EXCHANGE(t, "GET http://example?q HTTP/1.1\r\nHost: example\r\n\r\n");
	EXCHANGE(t, "GET /a/b%2Fc? HTTP/1.1\r\nHost: a\r\n\r\n");
}

static void test_query_string_is_stripped(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_queries, 0);
	assert_int_equal(t->handler_calls, 4);
	assert_string_equal(t->seen[0], "/healthz");
	assert_string_equal(t->seen[1], "/metrics");
	assert_string_equal(t->seen[2], "/");
	assert_string_equal(t->seen[3], "/a/b%2Fc");
	assert_status(&t->results[0], "HTTP/1.1 200 OK\r\n");
	assert_status(&t->results[1], "HTTP/1.1 200 OK\r\n");
	ctx_free(t);
}

static void client_not_found(test_ctx_t *t)
{
	EXCHANGE(t, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
}

static void test_handler_404(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_not_found, 0);
	assert_response(&t->results[0],
		"HTTP/1.1 404 Not Found\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 10\r\n"
		"Connection: close\r\n"
		"\r\n"
		"not found\n");
	ctx_free(t);
}

static void client_head(test_ctx_t *t)
{
	EXCHANGE(t, "HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
}

static void test_head_has_length_but_no_body(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_head, 0);
	assert_response(&t->results[0],
		"HTTP/1.1 200 OK\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 3\r\n"
		"Connection: close\r\n"
		"\r\n");
	assert_int_equal(t->handler_calls, 1);
	ctx_free(t);
}

static void client_other_methods(test_ctx_t *t)
{
	/*
	 * The body arrives after the 405 has been sent. Closing a socket that
	 * then receives data makes the kernel answer with RST, which can wipe
	 * the response out of the client's buffer; the server must read and
	 * drop it instead, until the client is done.
	 */
	int fd = client_connect(t);
	if (fd >= 0) {
		double start = now_ms();
		const char *head = "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n";
		client_send(fd, head, strlen(head));
		struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		client_send(fd, "hello=world", 11);
		nanosleep(&pause, NULL);
		client_read_all(t, fd, start);
		close(fd);
	}
	/* A body far larger than the server reads with the head, sent at once. */
	fd = client_connect(t);
	if (fd >= 0) {
		size_t body = 256 * 1024;
		char *req = xasprintf("POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n", body);
		size_t head_len = strlen(req);
		req = xrealloc(req, head_len + body);
		memset(req + head_len, 'b', body);
		double start = now_ms();
		client_send(fd, req, head_len + body);
		free(req);
		client_read_all(t, fd, start);
		close(fd);
	}
	EXCHANGE(t, "DELETE /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "get /healthz HTTP/1.1\r\nHost: a\r\n\r\n"); /* methods are case-sensitive */
}

static void test_other_methods_get_405(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_other_methods, 0);
	assert_int_equal(t->nresults, 4);
	assert_response(&t->results[0],
		"HTTP/1.1 405 Method Not Allowed\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 19\r\n"
		"Allow: GET, HEAD\r\n"
		"Connection: close\r\n"
		"\r\n"
		"Method Not Allowed\n");
	/* Neither body turned the end of the connection into a reset. */
	for (int i = 0; i < 2; i++) {
		assert_false(t->results[i].reset);
		assert_false(t->results[i].timed_out);
	}
	for (int i = 1; i < 4; i++)
		assert_status(&t->results[i], "HTTP/1.1 405 ");
	assert_int_equal(t->handler_calls, 0);
	ctx_free(t);
}

static void client_garbage(test_ctx_t *t)
{
	EXCHANGE(t, "\x01\x02garbage\r\n\r\n");
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\n\r\n");                          /* HTTP/1.1 without Host */
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");    /* two Hosts */
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  folded\r\n\r\n");
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n");
	EXCHANGE(t, "GET healthz HTTP/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET /health#z HTTP/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET  /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET /healthz http/1.1\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost: a\rb\r\n\r\n");
	/* An invalid request line is answered at once, without waiting for the empty line or the deadline. */
	EXCHANGE(t, "NOT A REQUEST\r\n");
}

static void test_malformed_requests_get_400(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_garbage, 10000);
	assert_int_equal(t->nresults, 11);
	assert_response(&t->results[0],
		"HTTP/1.1 400 Bad Request\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 12\r\n"
		"Connection: close\r\n"
		"\r\n"
		"Bad Request\n");
	for (int i = 1; i < t->nresults; i++)
		assert_status(&t->results[i], "HTTP/1.1 400 Bad Request\r\n");
	assert_true(t->results[10].ms < 5000);
	assert_int_equal(t->handler_calls, 0);
	ctx_free(t);
}

static void client_versions(test_ctx_t *t)
{
	EXCHANGE(t, "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n");
	EXCHANGE(t, "GET /healthz HTTP/1.9\r\nHost: a\r\n\r\n"); /* a later 1.x is served as 1.1 */
}

static void test_other_versions(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_versions, 0);
	assert_status(&t->results[0], "HTTP/1.1 505 HTTP Version Not Supported\r\n");
	assert_status(&t->results[1], "HTTP/1.1 200 OK\r\n");
	ctx_free(t);
}

/* A request head of exactly total bytes, padded in one header. */
static char *padded_request(size_t total)
{
	const char *prefix = "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Pad: ";
	const char *suffix = "\r\n\r\n";
	size_t fixed = strlen(prefix) + strlen(suffix);
	char *req = xmalloc(total + 1);
	memcpy(req, prefix, strlen(prefix));
	memset(req + strlen(prefix), 'p', total - fixed);
	memcpy(req + total - strlen(suffix), suffix, strlen(suffix) + 1);
	return req;
}

static void client_big_heads(test_ctx_t *t)
{
	char *exact = padded_request(HTTP_SERVER_MAX_HEAD);
	char *over = padded_request(HTTP_SERVER_MAX_HEAD + 1);
	char *far_over = padded_request(40000);
	client_exchange(t, exact, strlen(exact));
	client_exchange(t, over, strlen(over));
	client_exchange(t, far_over, strlen(far_over));
	free(exact);
	free(over);
	free(far_over);
}

static void test_oversized_head_gets_431(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_big_heads, 0);
	assert_int_equal(t->nresults, 3);
	assert_status(&t->results[0], "HTTP/1.1 200 OK\r\n"); /* the cap itself is allowed */
	assert_response(&t->results[1],
		"HTTP/1.1 431 Request Header Fields Too Large\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 32\r\n"
		"Connection: close\r\n"
		"\r\n"
		"Request Header Fields Too Large\n");
	assert_status(&t->results[2], "HTTP/1.1 431 ");
	assert_int_equal(t->handler_calls, 1);
	ctx_free(t);
}

static void client_idle(test_ctx_t *t)
{
	/* Says nothing at all. */
	int fd = client_connect(t);
	if (fd >= 0) {
		client_read_all(t, fd, now_ms());
		close(fd);
	}
	/* Starts a request and stalls (slowloris). */
	fd = client_connect(t);
	if (fd >= 0) {
		double start = now_ms();
		client_send(fd, "GET /healthz HTTP/1.1\r\nHo", 25);
		client_read_all(t, fd, start);
		close(fd);
	}
}

static void test_idle_connection_closed_after_deadline(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_idle, 100);
	assert_int_equal(t->nresults, 2);
	for (int i = 0; i < 2; i++) {
		const client_result_t *r = &t->results[i];
		assert_false(r->timed_out);    /* closed by the server, well before the client's 5 s */
		assert_int_equal(r->len, 0);   /* without a response */
		assert_true(r->ms >= 90);
		assert_true(r->ms < 3000);
	}
	assert_int_equal(t->handler_calls, 0);
	ctx_free(t);
}

static void client_over_limit(test_ctx_t *t)
{
	int fds[HTTP_SERVER_MAX_CONNECTIONS];
	for (int i = 0; i < HTTP_SERVER_MAX_CONNECTIONS; i++)
		fds[i] = client_connect(t);
	/* One too many: accepted and closed at once, long before the 10 s deadline. */
	int extra = client_connect(t);
	if (extra >= 0) {
		client_read_all(t, extra, now_ms());
		close(extra);
	}
	/* The others are still open and served. */
	if (fds[0] >= 0) {
		double start = now_ms();
		client_send(fds[0], "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 35);
		client_read_all(t, fds[0], start);
		close(fds[0]);
	}
	/* That freed a slot: a new connection is served again. */
	EXCHANGE(t, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
	for (int i = 1; i < HTTP_SERVER_MAX_CONNECTIONS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
}

static void test_connection_limit(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_over_limit, 10000);
	assert_int_equal(t->nresults, 3);
	assert_int_equal(t->results[0].len, 0);
	assert_false(t->results[0].timed_out);
	assert_true(t->results[0].ms < 3000);
	assert_status(&t->results[1], "HTTP/1.1 200 OK\r\n");
	assert_status(&t->results[2], "HTTP/1.1 200 OK\r\n");
	ctx_free(t);
}

static void client_fail(test_ctx_t *t)
{
	EXCHANGE(t, "GET /fail HTTP/1.1\r\nHost: a\r\n\r\n");
}

static void test_handler_failure_gets_500(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_fail, 0);
	assert_response(&t->results[0],
		"HTTP/1.1 500 Internal Server Error\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 22\r\n"
		"Connection: close\r\n"
		"\r\n"
		"Internal Server Error\n");
	ctx_free(t);
}

static void client_half_close(test_ctx_t *t)
{
	static const char *const requests[] = {
		"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /big HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	for (int i = 0; i < 2; i++) {
		int fd = client_connect(t);
		if (fd < 0)
			return;
		double start = now_ms();
		client_send(fd, requests[i], strlen(requests[i]));
		shutdown(fd, SHUT_WR);
		/* Let the server see our EOF while the big response is still being written. */
		struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };
		nanosleep(&pause, NULL);
		client_read_all(t, fd, start);
		close(fd);
	}
}

static void test_half_closed_client_still_gets_response(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_half_close, 0);
	assert_int_equal(t->nresults, 2);
	assert_status(&t->results[0], "HTTP/1.1 200 OK\r\n");
	assert_non_null(strstr(t->results[0].data, "\r\n\r\nok\n"));
	const client_result_t *big = &t->results[1];
	assert_status(big, "HTTP/1.1 200 OK\r\n");
	assert_non_null(strstr(big->data, "\r\nContent-Length: 8388608\r\n"));
	const char *body = strstr(big->data, "\r\n\r\n");
	assert_non_null(body);
	assert_int_equal(big->len - (size_t)(body + 4 - big->data), BIG_BODY);
	ctx_free(t);
}

static void client_close_from_handler(test_ctx_t *t)
{
	/* An idle connection, then a request that makes the handler close the server. */
	int idle = client_connect(t);
	EXCHANGE(t, "GET /close HTTP/1.1\r\nHost: a\r\n\r\n");
	if (idle >= 0) {
		client_read_all(t, idle, now_ms());
		close(idle);
	}
}

static void test_close_from_handler_closes_everything(void **state)
{
	(void)state;
	test_ctx_t *t = run_with_client(client_close_from_handler, 10000);
	assert_true(t->closed_by_handler);
	assert_int_equal(t->nresults, 2);
	/* Both connections end without a response and without waiting for the deadline. */
	for (int i = 0; i < 2; i++) {
		assert_false(t->results[i].timed_out);
		assert_int_equal(t->results[i].len, 0);
		assert_true(t->results[i].ms < 3000);
	}
	ctx_free(t);
}

static void on_closed_count(void *data)
{
	(*(int *)data)++;
}

static void test_start_errors_and_addresses(void **state)
{
	(void)state;
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	char err[256];
	http_server_t *s = NULL;
	const char *bad[] = { "nonsense", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:8x", "127.0.0.1:123456",
		"localhost:8080", "[::1:8080", "::1:8080", "[]:8080", "300.1.1.1:80", NULL };
	for (int i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		assert_int_equal(http_server_start(&loop, bad[i], test_handler, NULL, &s, err, sizeof(err)), UV_EINVAL);
		assert_null(s);
		assert_true(strlen(err) > 0);
		assert_non_null(strstr(err, bad[i]));
	}
	assert_int_equal(http_server_start(&loop, NULL, test_handler, NULL, &s, err, sizeof(err)), UV_EINVAL);

	int closed = 0;
	http_server_t *any = NULL, *v4 = NULL, *v6 = NULL, *dup = NULL;
	assert_int_equal(http_server_start(&loop, ":0", test_handler, NULL, &any, err, sizeof(err)), 0);
	assert_true(http_server_port(any) > 0);
	/* ":port" takes IPv4 clients too (the kernel completes the handshake before any accept). */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)http_server_port(any)) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(http_server_start(&loop, "127.0.0.1:0", test_handler, NULL, &v4, err, sizeof(err)), 0);
	char taken[64];
	snprintf(taken, sizeof(taken), "127.0.0.1:%d", http_server_port(v4));
	int rc = http_server_start(&loop, taken, test_handler, NULL, &dup, err, sizeof(err));
	assert_int_equal(rc, UV_EADDRINUSE);
	assert_null(dup);
	assert_non_null(strstr(err, "address already in use"));
	rc = http_server_start(&loop, "[::1]:0", test_handler, NULL, &v6, err, sizeof(err));
	if (rc == 0) {
		assert_true(http_server_port(v6) > 0);
		http_server_close(v6, on_closed_count, &closed);
	} else {
		closed++; /* no IPv6 loopback here */
	}
	http_server_close(any, on_closed_count, &closed);
	http_server_close(v4, on_closed_count, &closed);
	assert_int_equal(closed, v6 ? 0 : 1); /* never from inside close */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(closed, 3);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- the parser on its own ----------------------------------------------- */

static int parse(const char *s, http_server_request_t *req)
{
	return http_server_parse_request(s, strlen(s), req);
}

static void test_parser_fields(void **state)
{
	(void)state;
	http_server_request_t req;
	const char *head = "\r\nGET /a/b?c=d HTTP/1.1\r\nHost:  example.com:80 \t\r\nAccept: */*\r\nX-Empty:\r\n\r\nBODY";
	int n = parse(head, &req);
	assert_int_equal(n, (int)(strstr(head, "BODY") - head));
	assert_int_equal(req.method_len, 3);
	assert_memory_equal(req.method, "GET", 3);
	assert_int_equal(req.target_len, 8);
	assert_memory_equal(req.target, "/a/b?c=d", 8);
	assert_int_equal(req.path_len, 4);
	assert_memory_equal(req.path, "/a/b", 4);
	assert_int_equal(req.version_minor, 1);
	assert_int_equal(req.host_len, 14);
	assert_memory_equal(req.host, "example.com:80", 14);
	assert_int_equal(req.header_count, 3);

	/* Every strict prefix is incomplete, never an error. */
	size_t len = (size_t)n;
	for (size_t i = 0; i < len; i++)
		assert_int_equal(http_server_parse_request(head, i, &req), HTTP_SERVER_PARSE_INCOMPLETE);

	assert_int_equal(parse("GET / HTTP/1.0\n\n", &req), 16);
	assert_int_equal(req.version_minor, 0);
	assert_null(req.host);
	assert_int_equal(parse("GET HTTPS://h HTTP/1.1\r\nHost: h\r\n\r\n", &req), 35);
	assert_int_equal(req.path_len, 0);
	assert_int_equal(parse("OPTIONS /x HTTP/1.1\r\nHost: h\r\n\r\n", &req), 32);
	assert_int_equal(req.method_len, 7);
	assert_int_equal(http_server_parse_request(NULL, 0, &req), HTTP_SERVER_PARSE_INCOMPLETE);
}

static void test_parser_rejects(void **state)
{
	(void)state;
	http_server_request_t req;
	const char *bad[] = {
		"GET / HTTP/1.1\r\n\r\n",
		" GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
		"GET /\tx HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/11\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\n",           /* fine so far ... */
		"GET /\x80 HTTP/1.1\r\nHost: a\r\n\r\n",
		"G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET ftp://h/ HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n: novalue\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n",
		"GET / HTTP/1.1\r\nhost: a\r\nHOST: a\r\n\r\n",
		"GET / HTTP/1.1\r\r\nHost: a\r\n\r\n",
		NULL,
	};
	for (int i = 0; bad[i] != NULL; i++) {
		int rc = parse(bad[i], &req);
		if (i == 6)
			assert_int_equal(rc, HTTP_SERVER_PARSE_INCOMPLETE);
		else if (rc != HTTP_SERVER_PARSE_BAD)
			fail_msg("case %d: expected BAD, got %d", i, rc);
	}
	/* A NUL byte is just another invalid byte, not the end of the input. */
	const char nul[] = "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n";
	assert_int_equal(http_server_parse_request(nul, sizeof(nul) - 1, &req), HTTP_SERVER_PARSE_BAD);
	assert_int_equal(parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n", &req), HTTP_SERVER_PARSE_BAD_VERSION);
	assert_int_equal(parse("GET / HTTP/0.9\r\n\r\n", &req), HTTP_SERVER_PARSE_BAD_VERSION);
	/* An error is reported as soon as the bad line is complete. */
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost a\r\n", &req), HTTP_SERVER_PARSE_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_returns_handler_body),
		cmocka_unit_test(test_query_string_is_stripped),
		cmocka_unit_test(test_handler_404),
		cmocka_unit_test(test_head_has_length_but_no_body),
		cmocka_unit_test(test_other_methods_get_405),
		cmocka_unit_test(test_malformed_requests_get_400),
		cmocka_unit_test(test_other_versions),
		cmocka_unit_test(test_oversized_head_gets_431),
		cmocka_unit_test(test_idle_connection_closed_after_deadline),
		cmocka_unit_test(test_connection_limit),
		cmocka_unit_test(test_handler_failure_gets_500),
		cmocka_unit_test(test_half_closed_client_still_gets_response),
		cmocka_unit_test(test_close_from_handler_closes_everything),
		cmocka_unit_test(test_start_errors_and_addresses),
		cmocka_unit_test(test_parser_fields),
		cmocka_unit_test(test_parser_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
