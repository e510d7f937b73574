#include "http_server.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"
#include "xalloc.h"

#define HTTP_SERVER_BACKLOG 128
/*
 * Input read and dropped after the head (a body nobody asked for) before
 * giving up on the client. Enough for any sane request body, so that the
 * close is a FIN after the client is done rather than a reset that could
 * destroy the response; the deadline bounds the time spent on it.
 */
#define HTTP_SERVER_DROP_MAX (1024 * 1024)
/* At most one "connection limit reached" log line per this many milliseconds. */
#define HTTP_SERVER_LIMIT_LOG_MS 60000
#define HTTP_SERVER_DEFAULT_CONTENT_TYPE "text/plain; charset=utf-8"

/*
 * A connection's life. Every move goes through http_conn_set_state(), and
 * CLOSING is final: from there only the close callbacks touch it.
 */
typedef enum {
	HTTP_CONN_READING,  /* reading the request head into head[] */
	HTTP_CONN_WRITING,  /* response queued; input is read and dropped */
	HTTP_CONN_DRAINING, /* response written and FIN sent; waiting for the client's EOF */
	HTTP_CONN_CLOSING,  /* uv_close() called on both handles */
} http_conn_state_t;

typedef struct http_conn {
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	http_server_t *server;
	struct http_conn *prev;
	struct http_conn *next;
	http_conn_state_t state;
	bool counted;     /* holds one of the server's HTTP_SERVER_MAX_CONNECTIONS slots */
	bool peer_eof;    /* the client has finished sending */
	int open_handles; /* freed when the last close callback has run */
	size_t head_len;
	size_t dropped;
	char *response_head;
	char *body;
	char head[HTTP_SERVER_MAX_HEAD];
} http_conn_t;

struct http_server {
	uv_loop_t *loop;
	uv_tcp_t listener;
	http_server_handler handler;
	void *data;
	uint64_t read_timeout_ms;
	int port;
	http_conn_t *conns;     /* every connection not yet freed, closing ones included */
	unsigned nactive;       /* connections holding a slot */
	uint64_t refused;       /* connections refused since the last log line about it */
	uint64_t limit_logged_ms;
	bool limit_ever_logged;
	bool closing;
	bool listener_closed;
	void (*on_closed)(void *data);
	void *on_closed_data;
};

/* ---- request-head parser ------------------------------------------------- */

static bool http_is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool http_has_prefix_ci(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && strncasecmp(s, prefix, n) == 0;
}

/*
 * origin-form "/path?query" or absolute-form "http://authority/path?query";
 * the path is what the handler sees.
 */
static int http_parse_target(http_server_request_t *out)
{
	const char *t = out->target;
	size_t n = out->target_len;
	size_t path_start = 0;
	if (t[0] != '/') {
		size_t scheme = http_has_prefix_ci(t, n, "http://") ? 7 : http_has_prefix_ci(t, n, "https://") ? 8 : 0;
		if (scheme == 0)
			return HTTP_SERVER_PARSE_BAD;
		path_start = scheme;
		while (path_start < n && t[path_start] != '/' && t[path_start] != '?')
			path_start++;
		if (path_start == scheme)
			return HTTP_SERVER_PARSE_BAD; /* no authority */
	}
	size_t end = path_start;
	while (end < n && t[end] != '?')
		end++;
	out->path = t + path_start;
	out->path_len = end - path_start;
	return 0;
}

/* request-line = method SP request-target SP HTTP-version */
static int http_parse_request_line(const char *line, size_t len, http_server_request_t *out)
{
	size_t i = 0;
	while (i < len && http_is_tchar((unsigned char)line[i]))
		i++;
	if (i == 0 || i == len || line[i] != ' ')
		return HTTP_SERVER_PARSE_BAD;
	out->method = line;
	out->method_len = i;

	size_t target = ++i;
	while (i < len && (unsigned char)line[i] > 0x20 && (unsigned char)line[i] < 0x7f && line[i] != '#')
		i++;
	if (i == target || i == len || line[i] != ' ')
		return HTTP_SERVER_PARSE_BAD;
	out->target = line + target;
	out->target_len = i - target;

	const char *v = line + i + 1;
	if (len - i - 1 != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' ||
		v[7] < '0' || v[7] > '9')
		return HTTP_SERVER_PARSE_BAD;
	if (v[5] != '1')
		return HTTP_SERVER_PARSE_BAD_VERSION;
	out->version_minor = v[7] - '0';
	return http_parse_target(out);
}

/*
 * field-line = field-name ":" OWS field-value OWS. A line starting with
 * whitespace (obsolete folding) fails the token check, as does whitespace
 * before the colon: RFC 9112 requires both to be rejected.
 */
static int http_parse_header(const char *line, size_t len, http_server_request_t *out)
{
	size_t i = 0;
	while (i < len && http_is_tchar((unsigned char)line[i]))
		i++;
	if (i == 0 || i == len || line[i] != ':')
		return HTTP_SERVER_PARSE_BAD;
	size_t name_len = i++;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	size_t value = i, value_end = i;
	for (; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return HTTP_SERVER_PARSE_BAD;
		if (c != ' ' && c != '\t')
			value_end = i + 1;
	}
	out->header_count++;
	if (name_len == 4 && strncasecmp(line, "host", 4) == 0) {
		if (out->host != NULL)
			return HTTP_SERVER_PARSE_BAD;
		out->host = line + value;
		out->host_len = value_end - value;
	}
	return 0;
}

/*
 * Stateless: the server calls it again on the whole head each time a read
 * brings a line feed, which costs at most HTTP_SERVER_MAX_HEAD bytes of
 * scanning per read, and in exchange the fuzz target sees exactly what the
 * server runs.
 */
int http_server_parse_request(const char *buf, size_t len, http_server_request_t *out)
{
	memset(out, 0, sizeof(*out));
	bool have_request_line = false;
	size_t pos = 0;
	while (pos < len) {
		const char *lf = memchr(buf + pos, '\n', len - pos);
		if (lf == NULL)
			break;
		size_t next = (size_t)(lf - buf) + 1;
		size_t end = next - 1;
		if (end > pos && buf[end - 1] == '\r')
			end--;
		const char *line = buf + pos;
		size_t line_len = end - pos;
		if (!have_request_line) {
			if (line_len > 0) { /* empty lines before the request line are ignored */
				int rc = http_parse_request_line(line, line_len, out);
				if (rc != 0)
					return rc;
				have_request_line = true;
			}
		} else if (line_len == 0) {
			if (out->version_minor >= 1 && out->host == NULL)
				return HTTP_SERVER_PARSE_BAD;
			if (next > INT_MAX)
				return HTTP_SERVER_PARSE_BAD;
			return (int)next;
		} else {
			int rc = http_parse_header(line, line_len, out);
			if (rc != 0)
				return rc;
		}
		pos = next;
	}
	return HTTP_SERVER_PARSE_INCOMPLETE;
}

/* ---- connections --------------------------------------------------------- */

static void http_server_maybe_free(http_server_t *s)
{
	if (!s->closing || !s->listener_closed || s->conns != NULL)
		return;
	void (*on_closed)(void *) = s->on_closed;
	void *data = s->on_closed_data;
	free(s);
	if (on_closed != NULL)
		on_closed(data);
}

static void http_conn_on_handle_closed(uv_handle_t *handle)
{
	http_conn_t *c = handle->data;
	if (--c->open_handles > 0)
		return;
	http_server_t *s = c->server;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	free(c->response_head);
	free(c->body);
	free(c);
	http_server_maybe_free(s);
}

static void http_conn_set_state(http_conn_t *c, http_conn_state_t state)
{
	if (c->state == state || c->state == HTTP_CONN_CLOSING)
		return;
	c->state = state;
	if (state != HTTP_CONN_CLOSING)
		return;
	if (c->counted) {
		c->counted = false;
		c->server->nactive--;
	}
	/* Pending write and shutdown requests get UV_ECANCELED before the close callbacks. */
	uv_close((uv_handle_t *)&c->timer, http_conn_on_handle_closed);
	uv_close((uv_handle_t *)&c->tcp, http_conn_on_handle_closed);
}

static void http_conn_close(http_conn_t *c)
{
	http_conn_set_state(c, HTTP_CONN_CLOSING);
}

static void http_conn_on_timeout(uv_timer_t *timer)
{
	http_conn_close(timer->data);
}

static const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return ""; /* the reason phrase may be empty (RFC 9112 4) */
	}
}

/* IMF-fixdate, with our own names so a setlocale() elsewhere cannot change them. */
static void http_date(char *out, size_t outlen)
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
		"Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm) == NULL || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 || tm.tm_mon > 11) {
		snprintf(out, outlen, "Thu, 01 Jan 1970 00:00:00 GMT");
		return;
	}
	snprintf(out, outlen, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
		months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void http_conn_on_shutdown(uv_shutdown_t *req, int status)
{
	http_conn_t *c = req->data;
	if (c->state == HTTP_CONN_CLOSING)
		return;
	/* With the client's EOF already in, there is nothing left to wait for. */
	if (status < 0 || c->peer_eof)
		http_conn_close(c);
}

static void http_conn_on_write(uv_write_t *req, int status)
{
	http_conn_t *c = req->data;
	if (c->state == HTTP_CONN_CLOSING)
		return;
	free(c->response_head);
	c->response_head = NULL;
	free(c->body);
	c->body = NULL;
	if (status < 0) {
		http_conn_close(c);
		return;
	}
	/*
	 * Send FIN and keep reading until the client's own EOF instead of
	 * closing at once: closing a socket with unread input makes the kernel
	 * send RST, which can destroy the response before the client reads it.
	 */
	c->shutdown_req.data = c;
	if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, http_conn_on_shutdown) != 0) {
		http_conn_close(c);
		return;
	}
	http_conn_set_state(c, HTTP_CONN_DRAINING);
}

/*
 * Queues the whole response and takes ownership of body. The connection's
 * deadline starts again, now for writing the response and the client's
 * goodbye.
 */
static void http_conn_respond(http_conn_t *c, int status, const char *content_type, char *body, size_t body_len,
	bool head_only, const char *extra_headers)
{
	http_server_t *s = c->server;
	http_conn_set_state(c, HTTP_CONN_WRITING);
	uv_timer_start(&c->timer, http_conn_on_timeout, s->read_timeout_ms, 0);
	char date[64];
	http_date(date, sizeof(date));
	bool bodiless = status == 204 || status == 304;
	if (bodiless || body == NULL)
		body_len = 0;
	char length[48] = "";
	if (!bodiless)
		snprintf(length, sizeof(length), "Content-Length: %zu\r\n", body_len);
	c->response_head = xasprintf("HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\n%s%sConnection: close\r\n\r\n",
		status, http_reason(status), date, content_type, length, extra_headers ? extra_headers : "");
	c->body = body;
	uv_buf_t bufs[2];
	unsigned nbufs = 1;
	bufs[0] = uv_buf_init(c->response_head, (unsigned)strlen(c->response_head));
	if (!head_only && body_len > 0)
		bufs[nbufs++] = uv_buf_init(body, (unsigned)body_len);
	c->write_req.data = c;
	if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, bufs, nbufs, http_conn_on_write) != 0)
		http_conn_close(c);
}

static void http_conn_respond_error(http_conn_t *c, int status, const char *extra_headers)
{
	char *body = xasprintf("%s\n", http_reason(status));
	http_conn_respond(c, status, HTTP_SERVER_DEFAULT_CONTENT_TYPE, body, strlen(body), false, extra_headers);
}

static bool http_method_is(const http_server_request_t *req, const char *method)
{
	size_t n = strlen(method);
	return req->method_len == n && memcmp(req->method, method, n) == 0;
}

static void http_conn_serve(http_conn_t *c, const http_server_request_t *req)
{
	http_server_t *s = c->server;
	bool head_only = http_method_is(req, "HEAD");
	if (!head_only && !http_method_is(req, "GET")) {
		http_conn_respond_error(c, 405, "Allow: GET, HEAD\r\n");
		return;
	}
	char *path = req->path_len > 0 ? xstrndup(req->path, req->path_len) : xstrdup("/");
	int status = 200;
	char *body = NULL;
	size_t body_len = 0;
	const char *content_type = HTTP_SERVER_DEFAULT_CONTENT_TYPE;
	int rc = s->handler(path, s->data, &status, &body, &body_len, &content_type);
	if (c->state == HTTP_CONN_CLOSING) { /* the handler closed the server */
		free(path);
		free(body);
		return;
	}
	if (rc != 0 || status < 200 || status > 599 || content_type == NULL || strpbrk(content_type, "\r\n") != NULL) {
		char detail[32];
		snprintf(detail, sizeof(detail), "%d", rc != 0 ? rc : status);
		log_warn("http handler failed", "path", path, rc != 0 ? "rc" : "status", detail);
		free(path);
		free(body);
		http_conn_respond_error(c, 500, NULL);
		return;
	}
	free(path);
	http_conn_respond(c, status, content_type, body, body_len, head_only, NULL);
}

/*
 * While reading the head, libuv reads straight into what is left of head[],
 * so the cap is enforced by the buffer size itself. Afterwards, input is
 * read into head[] only to be dropped.
 */
static void http_conn_on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	(void)suggested;
	http_conn_t *c = handle->data;
	if (c->state == HTTP_CONN_READING)
		*buf = uv_buf_init(c->head + c->head_len, (unsigned)(sizeof(c->head) - c->head_len));
	else
		*buf = uv_buf_init(c->head, (unsigned)sizeof(c->head));
}

static void http_conn_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	(void)buf;
	http_conn_t *c = stream->data;
	if (c->state == HTTP_CONN_CLOSING || nread == 0)
		return;
	if (nread < 0) {
		/*
		 * A client that half-closes after its request still gets the
		 * response being written; anything else ends the connection.
		 */
		if (nread == UV_EOF && c->state == HTTP_CONN_WRITING) {
			c->peer_eof = true;
			uv_read_stop(stream);
			return;
		}
		http_conn_close(c);
		return;
	}
	if (c->state != HTTP_CONN_READING) {
		c->dropped += (size_t)nread;
		if (c->dropped > HTTP_SERVER_DROP_MAX)
			http_conn_close(c);
		return;
	}

	size_t start = c->head_len;
	c->head_len += (size_t)nread;
	int rc = HTTP_SERVER_PARSE_INCOMPLETE;
	http_server_request_t req;
	/* Only a completed line can change what the parser says. */
	if (memchr(c->head + start, '\n', (size_t)nread) != NULL)
		rc = http_server_parse_request(c->head, c->head_len, &req);
	if (rc > 0)
		http_conn_serve(c, &req);
	else if (rc == HTTP_SERVER_PARSE_BAD_VERSION)
		http_conn_respond_error(c, 505, NULL);
	else if (rc < 0)
		http_conn_respond_error(c, 400, NULL);
	else if (c->head_len == sizeof(c->head))
		http_conn_respond_error(c, 431, NULL);
}

static void http_server_note_refused(http_server_t *s)
{
	s->refused++;
	uint64_t now = uv_now(s->loop);
	if (s->limit_ever_logged && now - s->limit_logged_ms < HTTP_SERVER_LIMIT_LOG_MS)
		return;
	char max[16], refused[32];
	snprintf(max, sizeof(max), "%d", HTTP_SERVER_MAX_CONNECTIONS);
	snprintf(refused, sizeof(refused), "%llu", (unsigned long long)s->refused);
	log_warn("http connection limit reached, closing new connections", "max", max, "refused", refused);
	s->limit_ever_logged = true;
	s->limit_logged_ms = now;
	s->refused = 0;
}

static void http_server_on_connection(uv_stream_t *listener, int status)
{
	http_server_t *s = listener->data;
	if (status < 0) {
		log_warn("http accept failed", "error", uv_strerror(status));
		return;
	}
	http_conn_t *c = xcalloc(1, sizeof(*c));
	c->server = s;
	c->state = HTTP_CONN_READING;
	/* Neither can fail with a valid loop; not accepting would stall the listener. */
	if (uv_tcp_init(s->loop, &c->tcp) != 0 || uv_timer_init(s->loop, &c->timer) != 0)
		abort();
	c->tcp.data = c;
	c->timer.data = c;
	c->open_handles = 2;
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;

	if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
		http_conn_close(c);
		return;
	}
	if (s->nactive >= HTTP_SERVER_MAX_CONNECTIONS) {
		http_server_note_refused(s);
		http_conn_close(c);
		return;
	}
	c->counted = true;
	s->nactive++;
	if (uv_read_start((uv_stream_t *)&c->tcp, http_conn_on_alloc, http_conn_on_read) != 0) {
		http_conn_close(c);
		return;
	}
	uv_timer_start(&c->timer, http_conn_on_timeout, s->read_timeout_ms, 0);
}

/* ---- server -------------------------------------------------------------- */

static int http_server_error(char *err, size_t errlen, int rc, const char *fmt, const char *arg)
{
	if (errlen > 0) {
		char what[160];
		snprintf(what, sizeof(what), fmt, arg);
		if (rc == UV_EINVAL)
			snprintf(err, errlen, "%s", what);
		else
			snprintf(err, errlen, "%s: %s", what, uv_strerror(rc));
	}
	return rc;
}

/*
 * "host:port", "[v6]:port" or ":port", parsed by hand: the host must be an
 * IP literal (resolving names would need the loop's thread pool for a
 * probe endpoint that never needs it).
 */
static int http_server_parse_address(const char *address, struct sockaddr_storage *addr, bool *any, char *err,
	size_t errlen)
{
	memset(addr, 0, sizeof(*addr));
	*any = false;
	if (address == NULL)
		return http_server_error(err, errlen, UV_EINVAL, "%s", "no listen address");
	const char *colon = strrchr(address, ':');
	if (colon == NULL)
		return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\" has no :port", address);
	const char *p = colon + 1;
	size_t digits = strlen(p);
	int port = 0;
	if (digits == 0 || digits > 5)
		return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\": bad port", address);
	for (size_t i = 0; i < digits; i++) {
		if (p[i] < '0' || p[i] > '9')
			return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\": bad port", address);
		port = port * 10 + (p[i] - '0');
	}
	if (port > 65535)
		return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\": bad port", address);

	size_t host_len = (size_t)(colon - address);
	const char *host = address;
	char ip[64];
	if (host_len == 0) {
		*any = true;
		return uv_ip6_addr("::", port, (struct sockaddr_in6 *)addr);
	}
	bool v6 = host[0] == '[';
	if (v6) {
		if (host_len < 3 || host[host_len - 1] != ']')
			return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\": bad [IPv6] host", address);
		host++;
		host_len -= 2;
	}
	if (host_len >= sizeof(ip))
		return http_server_error(err, errlen, UV_EINVAL, "listen address \"%s\": host too long", address);
	memcpy(ip, host, host_len);
	ip[host_len] = '\0';
	int rc = v6 ? uv_ip6_addr(ip, port, (struct sockaddr_in6 *)addr) : uv_ip4_addr(ip, port, (struct sockaddr_in *)addr);
	if (rc != 0)
		return http_server_error(err, errlen, UV_EINVAL,
			"listen address \"%s\": host must be an IP address ([...] for IPv6)", address);
	return 0;
}

static void http_server_on_listener_closed(uv_handle_t *handle)
{
	http_server_t *s = handle->data;
	s->listener_closed = true;
	http_server_maybe_free(s);
}

int http_server_start(uv_loop_t *loop, const char *address, http_server_handler handler, void *data,
	http_server_t **out, char *err, size_t errlen)
{
	if (errlen > 0)
		err[0] = '\0';
	struct sockaddr_storage addr;
	bool any;
	int rc = http_server_parse_address(address, &addr, &any, err, errlen);
	if (rc != 0)
		return rc;
	if (handler == NULL)
		return http_server_error(err, errlen, UV_EINVAL, "%s", "no handler");

	http_server_t *s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->handler = handler;
	s->data = data;
	s->read_timeout_ms = HTTP_SERVER_READ_TIMEOUT_MS;
	rc = uv_tcp_init(loop, &s->listener);
	if (rc != 0) {
		free(s);
		return http_server_error(err, errlen, rc, "listen on %s", address);
	}
	s->listener.data = s;
	rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
	if (rc == UV_EAFNOSUPPORT && any) {
		/* No IPv6 in this kernel: every IPv4 interface, then. */
		struct sockaddr_in v4;
		uv_ip4_addr("0.0.0.0", ntohs(((struct sockaddr_in6 *)&addr)->sin6_port), &v4);
		rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&v4, 0);
	}
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&s->listener, HTTP_SERVER_BACKLOG, http_server_on_connection);
	struct sockaddr_storage bound;
	int bound_len = sizeof(bound);
	if (rc == 0)
		rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &bound_len);
	if (rc != 0) {
		http_server_error(err, errlen, rc, "listen on %s", address);
		s->closing = true;
		uv_close((uv_handle_t *)&s->listener, http_server_on_listener_closed);
		return rc;
	}
	s->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
					      : ntohs(((struct sockaddr_in *)&bound)->sin_port);
	char port[8];
	snprintf(port, sizeof(port), "%d", s->port);
	log_info("http server listening", "address", address, "port", port);
	*out = s;
	return 0;
}

int http_server_port(const http_server_t *s)
{
	return s->port;
}

void http_server_set_read_timeout(http_server_t *s, uint64_t ms)
{
	s->read_timeout_ms = ms > 0 ? ms : HTTP_SERVER_READ_TIMEOUT_MS;
}

void http_server_close(http_server_t *s, void (*on_closed)(void *data), void *data)
{
	if (s->closing) {
		log_error("http_server_close called twice");
		abort();
	}
	s->closing = true;
	s->on_closed = on_closed;
	s->on_closed_data = data;
	uv_close((uv_handle_t *)&s->listener, http_server_on_listener_closed);
	for (http_conn_t *c = s->conns; c != NULL; c = c->next)
		http_conn_close(c); /* unlinked later, in the close callbacks */
}
