#include "kube_http.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "buf.h"
#include "exec_credential.h"
#include "log.h"
#include "rfc3339.h"
#include "xalloc.h"

#define KUBE_HTTP_DEFAULT_TIMEOUT_MS 30000L
#define KUBE_HTTP_DEFAULT_MAX_BODY (64u * 1024u * 1024u)
#define KUBE_HTTP_MAX_TOKEN (64u * 1024u)
#define KUBE_HTTP_RETRY_BASE_MS 200u
#define KUBE_HTTP_RETRY_MAX_MS 5000u

struct kube_http {
	uv_loop_t *loop;
	CURLM *multi;
	uv_timer_t timer;
	kubeconfig_t cfg; /* private deep copy of the strings this client needs */
	char *token;      /* current bearer token (inline, last read from token_file, or the plugin's) */
	struct timespec token_mtime;
	exec_credential_t cred; /* the exec plugin's last credential (cfg.exec) */
	bool have_cred;
	unsigned cred_gen; /* bumped at every plugin run: a 401 on an older one just retries */
	uint64_t plugin_failed_ms; /* uv_now() of the last failed run, 0 if the last run worked */
	char plugin_error[1024];   /* its message, repeated until the next run */
	kube_http_call_t *calls; /* not yet finished, doubly linked */
	kube_http_observer_cb observer;
	void *observer_data;
	bool openssl; /* libcurl's TLS is OpenSSL: kube_http_ssl_ctx may touch its SSL_CTX */
	bool closing;
};

struct kube_http_call {
	kube_http_t *http;
	CURL *easy;
	struct curl_slist *headers;
	char *method;
	char *content_type;
	unsigned cred_gen;  /* the credential generation of the current attempt */
	bool reauthed;      /* a 401 already re-ran the plugin (or retried with a newer credential) */
	char *body;
	buf_t resp; /* the body, up to the request's max_body */
	bool resp_over_cap;
	bool receiver_stopped;
	bool in_multi;
	bool cancelled;
	int retry;
	int attempt;
	uint64_t deadline;       /* uv_now() ms, 0 for none */
	uint64_t attempt_start;  /* uv_hrtime() ns */
	long retry_after_ms;     /* from the last answer's Retry-After, -1 if none */
	uv_timer_t retry_timer;  /* backoff between attempts, and deferred cancellation */
	kube_http_cb cb;
	kube_http_data_cb on_data;
	void *data;
	char errbuf[CURL_ERROR_SIZE];
	kube_http_call_t *prev, *next;
};

typedef struct {
	uv_poll_t poll;
	curl_socket_t fd;
	kube_http_t *http;
} kube_http_sock_t;

static int kube_http_start_attempt(kube_http_call_t *call);

static char *kube_http_dup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static kubeconfig_blob_t kube_http_dup_blob(kubeconfig_blob_t b)
{
	kubeconfig_blob_t out = { 0 };
	if (b.data != NULL) {
		out.data = xstrndup(b.data, b.len);
		out.len = b.len;
	}
	return out;
}

/*
 * The token file of a projected service-account volume is rotated by kubelet
 * (hourly by default). Re-reading it when its mtime changes, at request time,
 * keeps the client authenticated without a timer.
 */
static int kube_http_refresh_token(kube_http_t *http, char *err, size_t errlen)
{
	if (http->cfg.token_file == NULL)
		return 0;
	struct stat st;
	if (stat(http->cfg.token_file, &st) != 0) {
		snprintf(err, errlen, "token file %s: %s", http->cfg.token_file, strerror(errno));
		return -1;
	}
	if (http->token != NULL && st.st_mtim.tv_sec == http->token_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == http->token_mtime.tv_nsec)
		return 0;
	FILE *f = fopen(http->cfg.token_file, "r");
	if (f == NULL) {
		snprintf(err, errlen, "token file %s: %s", http->cfg.token_file, strerror(errno));
		return -1;
	}
	char *buf = xmalloc(KUBE_HTTP_MAX_TOKEN + 1);
	size_t n = fread(buf, 1, KUBE_HTTP_MAX_TOKEN + 1, f);
	fclose(f);
	if (n > KUBE_HTTP_MAX_TOKEN) {
		free(buf);
		snprintf(err, errlen, "token file %s: larger than %u bytes", http->cfg.token_file,
			 KUBE_HTTP_MAX_TOKEN);
		return -1;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	free(http->token);
	http->token = buf;
	http->token_mtime = st.st_mtim;
	return 0;
}

/*
 * An exec plugin runs synchronously. It runs at start (before the loop serves
 * anything; up to EXEC_CREDENTIAL_START_TIMEOUT_MS), when its credential
 * expires (once per token lifetime, typically 15 minutes to an hour) and on a
 * 401 that the current credential earned; plugins answer in well under a
 * second. That keeps every request on one simple path (no queue of requests
 * waiting for a credential) at the price of a rare short stall of the loop,
 * bounded by EXEC_CREDENTIAL_TIMEOUT_MS, half the Lease's renew deadline. A
 * failed run is not repeated for EXEC_CREDENTIAL_RETRY_MS, so a broken plugin
 * cannot stall the loop request after request.
 */
static int kube_http_run_plugin(kube_http_t *http, char *err, size_t errlen)
{
	uint64_t now = uv_now(http->loop);
	if (http->plugin_failed_ms != 0 && now - http->plugin_failed_ms < EXEC_CREDENTIAL_RETRY_MS) {
		snprintf(err, errlen, "%s", http->plugin_error);
		return -1;
	}
	exec_credential_t cred;
	unsigned timeout = http->cred_gen == 0 ? EXEC_CREDENTIAL_START_TIMEOUT_MS : EXEC_CREDENTIAL_TIMEOUT_MS;
	if (exec_credential_run(&http->cfg, timeout, &cred, err, errlen) != 0) {
		uv_update_time(http->loop);
		http->plugin_failed_ms = uv_now(http->loop);
		if (http->plugin_failed_ms == 0)
			http->plugin_failed_ms = 1;
		snprintf(http->plugin_error, sizeof(http->plugin_error), "%s", err);
		return -1;
	}
	uv_update_time(http->loop); /* the loop's clock stood still while the plugin ran */
	http->plugin_failed_ms = 0;
	exec_credential_free(&http->cred);
	http->cred = cred;
	http->have_cred = true;
	http->cred_gen++;
	free(http->token);
	http->token = cred.token ? xstrdup(cred.token) : NULL;
	char when[RFC3339_LEN] = "never";
	if (cred.expiry_us != 0)
		rfc3339_format(cred.expiry_us, 0, when, sizeof(when));
	log_info("exec credential plugin ran", "command", http->cfg.exec->command, "expires", when);
	return 0;
}

static bool kube_http_cred_expired(const kube_http_t *http)
{
	if (!http->have_cred)
		return true;
	if (http->cred.expiry_us == 0)
		return false;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000 >= http->cred.expiry_us;
}

/* The token file's or the exec plugin's credential, fresh for the next request. */
static int kube_http_refresh_credentials(kube_http_t *http, char *err, size_t errlen)
{
	if (http->cfg.exec != NULL && kube_http_cred_expired(http))
		return kube_http_run_plugin(http, err, errlen);
	return kube_http_refresh_token(http, err, errlen);
}

/* ---- completion ---------------------------------------------------------- */

static void kube_http_call_unlink(kube_http_call_t *call)
{
	kube_http_t *http = call->http;
	if (call->prev)
		call->prev->next = call->next;
	else
		http->calls = call->next;
	if (call->next)
		call->next->prev = call->prev;
	call->prev = call->next = NULL;
}

static void kube_http_call_closed(uv_handle_t *handle)
{
	kube_http_call_t *call = handle->data;
	curl_easy_cleanup(call->easy);
	curl_slist_free_all(call->headers);
	free(call->method);
	free(call->content_type);
	free(call->body);
	buf_free(&call->resp);
	free(call);
}

/* Memory goes only in the timer's close callback, as libuv requires. */
static void kube_http_call_release(kube_http_call_t *call)
{
	uv_timer_stop(&call->retry_timer);
	uv_close((uv_handle_t *)&call->retry_timer, kube_http_call_closed);
}

/*
 * Turn an API answer into a message a person can act on. Kubernetes puts a
 * Status object in the body of most errors; its message says what is wrong
 * (`nodes "x" not found`) far better than the status line does.
 */
static void kube_http_finish(kube_http_call_t *call, CURLcode code)
{
	kube_http_response_t resp = { 0 };
	char msg[512];
	char *status_message = NULL, *status_reason = NULL;

	resp.body = call->resp.data != NULL ? call->resp.data : "";
	resp.body_len = call->resp.len;

	if (code == CURLE_OK) {
		long version = 0;
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &resp.status);
		curl_easy_getinfo(call->easy, CURLINFO_HTTP_VERSION, &version);
		resp.http_major = version == CURL_HTTP_VERSION_2_0 ? 2 : version == CURL_HTTP_VERSION_3 ? 3 : version ? 1 : 0;
	}

	if (call->cancelled) {
		resp.status = 0;
		resp.error = call->http->closing ? "client closed" : "cancelled";
	} else if (call->receiver_stopped) {
		resp.error = "stream ended by the receiver";
	} else if (call->resp_over_cap) {
		snprintf(msg, sizeof(msg), "response body larger than %zu bytes", call->resp.max);
		resp.status = 0;
		resp.error = msg;
	} else if (code != CURLE_OK) {
		snprintf(msg, sizeof(msg), "%s", call->errbuf[0] ? call->errbuf : curl_easy_strerror(code));
		resp.status = 0;
		resp.error = msg;
	} else if (resp.status < 200 || resp.status > 299) {
		cJSON *status = cJSON_ParseWithLength(call->resp.data, call->resp.len);
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(status, "message");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(status, "reason");
		if (cJSON_IsString(m))
			status_message = xstrdup(m->valuestring);
		if (cJSON_IsString(r))
			status_reason = xstrdup(r->valuestring);
		cJSON_Delete(status);
		if (status_message)
			snprintf(msg, sizeof(msg), "%s", status_message);
		else
			snprintf(msg, sizeof(msg), "HTTP %ld", resp.status);
		resp.error = msg;
		resp.reason = status_reason;
	}

	kube_http_call_unlink(call);
	call->cb(&resp, call->data);
	free(status_message);
	free(status_reason);
	kube_http_call_release(call);
}

static bool kube_http_retryable(CURLcode code, long status)
{
	if (code != CURLE_OK)
		return code == CURLE_COULDNT_CONNECT || code == CURLE_RECV_ERROR ||
		       code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING ||
		       code == CURLE_PARTIAL_FILE || code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM;
	return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

/* Full jitter on an exponential backoff keeps retrying clients from marching in step. */
static uint64_t kube_http_backoff_ms(int attempt)
{
	uint64_t ceiling = KUBE_HTTP_RETRY_BASE_MS;
	for (int i = 1; i < attempt && ceiling < KUBE_HTTP_RETRY_MAX_MS; i++)
		ceiling *= 2;
	if (ceiling > KUBE_HTTP_RETRY_MAX_MS)
		ceiling = KUBE_HTTP_RETRY_MAX_MS;
	return ceiling / 2 + (uint64_t)random() % (ceiling / 2 + 1);
}

static void kube_http_on_retry(uv_timer_t *timer)
{
	kube_http_call_t *call = timer->data;
	if (kube_http_start_attempt(call) != 0)
		kube_http_finish(call, CURLE_FAILED_INIT);
}

/*
 * A 401 with an exec plugin: once per request, run the plugin again if the
 * credential that was refused is still the current one (else another request
 * already did), and send the request again. Returns true when it was resent.
 */
static bool kube_http_reauthenticate(kube_http_call_t *call)
{
	kube_http_t *http = call->http;
	if (http->cfg.exec == NULL || call->reauthed)
		return false;
	call->reauthed = true;
	char err[1024];
	if (call->cred_gen == http->cred_gen && kube_http_run_plugin(http, err, sizeof(err)) != 0) {
		log_error("cannot authenticate: the exec credential plugin failed after a 401", "error", err);
		return false;
	}
	return kube_http_start_attempt(call) == 0;
}

static void kube_http_attempt_done(kube_http_call_t *call, CURLcode code)
{
	kube_http_t *http = call->http;
	long status = 0;
	if (code == CURLE_OK)
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
	if (http->observer)
		http->observer(call->method, status,
			       (double)(uv_hrtime() - call->attempt_start) / 1e9, http->observer_data);
	if (status == 401 && !call->cancelled && kube_http_reauthenticate(call))
		return;

	if (call->retry && !call->receiver_stopped && !call->resp_over_cap &&
	    kube_http_retryable(code, status)) {
		uint64_t delay = call->retry_after_ms >= 0 ? (uint64_t)call->retry_after_ms
							     : kube_http_backoff_ms(call->attempt);
		uint64_t now = uv_now(http->loop);
		if (call->deadline == 0 || now + delay < call->deadline) {
			log_debug("retrying request", "method", call->method,
				  "error", code != CURLE_OK ? curl_easy_strerror(code) : "retryable status");
			uv_timer_start(&call->retry_timer, kube_http_on_retry, delay, 0);
			return;
		}
	}
	kube_http_finish(call, code);
}

static void kube_http_check_done(kube_http_t *http)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(http->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		CURL *easy = m->easy_handle;
		CURLcode code = m->data.result;
		kube_http_call_t *call = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&call);
		curl_multi_remove_handle(http->multi, easy);
		call->in_multi = false;
		kube_http_attempt_done(call, code);
	}
}

/* ---- curl <-> libuv glue ------------------------------------------------- */

static void kube_http_on_poll(uv_poll_t *poll, int status, int events)
{
	kube_http_sock_t *sock = poll->data;
	kube_http_t *http = sock->http;
	int flags = 0;
	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	int running;
	curl_multi_socket_action(http->multi, sock->fd, flags, &running);
	kube_http_check_done(http);
}

static void kube_http_on_timer(uv_timer_t *timer)
{
	kube_http_t *http = timer->data;
	int running;
	curl_multi_socket_action(http->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	kube_http_check_done(http);
}

static int kube_http_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	(void)multi;
	kube_http_t *http = userp;
	if (timeout_ms < 0)
		uv_timer_stop(&http->timer);
	else
		uv_timer_start(&http->timer, kube_http_on_timer, (uint64_t)timeout_ms, 0);
	return 0;
}

static void kube_http_sock_closed(uv_handle_t *handle)
{
	free(handle->data);
}

static int kube_http_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	(void)easy;
	kube_http_t *http = userp;
	kube_http_sock_t *sock = socketp;

	if (what == CURL_POLL_REMOVE) {
		if (sock != NULL) {
			uv_poll_stop(&sock->poll);
			uv_close((uv_handle_t *)&sock->poll, kube_http_sock_closed);
			curl_multi_assign(http->multi, fd, NULL);
		}
		return 0;
	}
	if (sock == NULL) {
		sock = xcalloc(1, sizeof(*sock));
		sock->fd = fd;
		sock->http = http;
		if (uv_poll_init_socket(http->loop, &sock->poll, fd) != 0) {
			free(sock);
			return -1;
		}
		sock->poll.data = sock;
		curl_multi_assign(http->multi, fd, sock);
	}
	int events = 0;
	if (what & CURL_POLL_IN)
		events |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		events |= UV_WRITABLE;
	uv_poll_start(&sock->poll, events, kube_http_on_poll);
	return 0;
}

static size_t kube_http_on_body(char *ptr, size_t size, size_t nmemb, void *userp)
{
	kube_http_call_t *call = userp;
	size_t n = size * nmemb;
	if (call->on_data != NULL) {
		long status = 0;
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200 && status <= 299) {
			if (call->on_data(ptr, n, call->data) != 0) {
				call->receiver_stopped = true;
				return 0;
			}
			return n;
		}
	}
	if (buf_append(&call->resp, ptr, n) != 0) {
		call->resp_over_cap = true;
		return 0; /* curl turns this into CURLE_WRITE_ERROR */
	}
	return n;
}

/* Only Retry-After matters here; everything else the API says is in the body. */
static size_t kube_http_on_header(char *line, size_t size, size_t nitems, void *userp)
{
	kube_http_call_t *call = userp;
	size_t n = size * nitems;
	static const char name[] = "retry-after:";
	if (n > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
		char value[32];
		size_t vlen = n - (sizeof(name) - 1);
		if (vlen >= sizeof(value))
			vlen = sizeof(value) - 1;
		memcpy(value, line + sizeof(name) - 1, vlen);
		value[vlen] = '\0';
		char *end;
		errno = 0;
		long secs = strtol(value, &end, 10);
		while (*end == ' ' || *end == '\r' || *end == '\n')
			end++;
		if (errno == 0 && *end == '\0' && secs >= 0 && secs <= 3600)
			call->retry_after_ms = secs * 1000;
	}
	return n;
}

/* ---- public API ---------------------------------------------------------- */

/*
 * libcurl allocates through drashift's wrappers, so running out of memory
 * ends the process in one place (xalloc.c) whoever asked for the memory.
 */
static void kube_http_global_init(void)
{
	curl_global_init_mem(CURL_GLOBAL_DEFAULT, xmalloc, free, xrealloc, xstrdup, xcalloc);
}

int kube_http_init(uv_loop_t *loop, const kubeconfig_t *cfg, kube_http_t **out, char *err,
		   size_t errlen)
{
	static uv_once_t curl_once = UV_ONCE_INIT;
	uv_once(&curl_once, kube_http_global_init);

	kube_http_t *http = xcalloc(1, sizeof(*http));
	http->loop = loop;
	http->cfg.source = kube_http_dup(cfg->source);
	http->cfg.server = kube_http_dup(cfg->server);
	http->cfg.insecure_skip_tls_verify = cfg->insecure_skip_tls_verify;
	http->cfg.ca_file = kube_http_dup(cfg->ca_file);
	http->cfg.ca = kube_http_dup_blob(cfg->ca);
	http->cfg.client_cert_file = kube_http_dup(cfg->client_cert_file);
	http->cfg.client_cert = kube_http_dup_blob(cfg->client_cert);
	http->cfg.client_key_file = kube_http_dup(cfg->client_key_file);
	http->cfg.client_key = kube_http_dup_blob(cfg->client_key);
	http->cfg.token_file = kube_http_dup(cfg->token_file);
	http->cfg.tls_server_name = kube_http_dup(cfg->tls_server_name);
	http->cfg.exec = kubeconfig_exec_dup(cfg->exec);
	http->token = kube_http_dup(cfg->token);
	if (cfg->tls_server_name != NULL)
		log_warn("kubeconfig tls-server-name is not supported; the server name is checked",
			 "source", cfg->source);

	if (kube_http_refresh_credentials(http, err, errlen) != 0) {
		kubeconfig_free(&http->cfg);
		exec_credential_free(&http->cred);
		free(http->token);
		free(http);
		return -1;
	}
	srandom((unsigned)uv_hrtime());
	const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
	http->openssl = curl->ssl_version != NULL && strncmp(curl->ssl_version, "OpenSSL/", 8) == 0;
	http->multi = curl_multi_init();
	curl_multi_setopt(http->multi, CURLMOPT_SOCKETFUNCTION, kube_http_curl_socket);
	curl_multi_setopt(http->multi, CURLMOPT_SOCKETDATA, http);
	curl_multi_setopt(http->multi, CURLMOPT_TIMERFUNCTION, kube_http_curl_timer);
	curl_multi_setopt(http->multi, CURLMOPT_TIMERDATA, http);
	curl_multi_setopt(http->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	uv_timer_init(loop, &http->timer);
	http->timer.data = http;
	*out = http;
	return 0;
}

void kube_http_set_observer(kube_http_t *http, kube_http_observer_cb cb, void *data)
{
	http->observer = cb;
	http->observer_data = data;
}

static void kube_http_set_blob(CURL *easy, CURLoption opt, const kubeconfig_blob_t *blob)
{
	struct curl_blob b = { .data = blob->data, .len = blob->len, .flags = CURL_BLOB_COPY };
	curl_easy_setopt(easy, opt, &b);
}

/*
 * libcurl asks OpenSSL to free a connection's read buffer whenever it is
 * empty (SSL_MODE_RELEASE_BUFFERS), so every read of a watch allocated 17 KB
 * anew; that large request made glibc consolidate its small free chunks each
 * time: 12% of drashift's CPU at 1,000 nodes (perf, tools/bench scale). The
 * buffers stay instead: about 34 KB per connection, a dozen connections.
 */
static CURLcode kube_http_ssl_ctx(CURL *easy, void *ssl_ctx, void *data)
{
	(void)easy;
	(void)data;
	SSL_CTX_clear_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
	return CURLE_OK;
}

static void kube_http_setup_tls(kube_http_t *http, CURL *easy)
{
	const kubeconfig_t *cfg = &http->cfg;
	if (http->openssl)
		curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, kube_http_ssl_ctx);
	if (cfg->insecure_skip_tls_verify) {
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cfg->ca.data) {
		kube_http_set_blob(easy, CURLOPT_CAINFO_BLOB, &cfg->ca);
	} else if (cfg->ca_file) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, cfg->ca_file);
	} else {
		/*
		 * The system's CAs: the bundle file alone, without the directory
		 * beside it (Debian's holds the same certificates). libcurl (7.88)
		 * keeps a store built from the file in the multi handle
		 * (CURLOPT_CA_CACHE_TIMEOUT); with the directory set it parsed the
		 * bundle again for every new connection, on the loop: 0.3 s each on
		 * a busy machine, and under ASan long enough that the leader lost
		 * its Lease (test/integration/prometheus_tls.sh, plan no-ca).
		 */
		curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
	}
	if (cfg->client_cert.data) {
		kube_http_set_blob(easy, CURLOPT_SSLCERT_BLOB, &cfg->client_cert);
		curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (cfg->client_cert_file) {
		curl_easy_setopt(easy, CURLOPT_SSLCERT, cfg->client_cert_file);
	}
	if (cfg->client_key.data) {
		kube_http_set_blob(easy, CURLOPT_SSLKEY_BLOB, &cfg->client_key);
		curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (cfg->client_key_file) {
		curl_easy_setopt(easy, CURLOPT_SSLKEY, cfg->client_key_file);
	}
}

/* The headers of one attempt: the credential may have changed since the last. */
static void kube_http_set_headers(kube_http_call_t *call)
{
	kube_http_t *http = call->http;
	curl_slist_free_all(call->headers);
	call->headers = NULL;
	call->headers = curl_slist_append(call->headers, "Accept: application/json");
	call->headers = curl_slist_append(call->headers, "User-Agent: drashift/" DRASHIFT_VERSION);
	if (call->content_type) {
		char *h = xasprintf("Content-Type: %s", call->content_type);
		call->headers = curl_slist_append(call->headers, h);
		free(h);
	}
	if (http->token && http->token[0]) {
		char *h = xasprintf("Authorization: Bearer %s", http->token);
		call->headers = curl_slist_append(call->headers, h);
		OPENSSL_cleanse(h, strlen(h));
		free(h);
	}
	curl_easy_setopt(call->easy, CURLOPT_HTTPHEADER, call->headers);
	if (http->cred.cert.data != NULL) {
		kube_http_set_blob(call->easy, CURLOPT_SSLCERT_BLOB, &http->cred.cert);
		curl_easy_setopt(call->easy, CURLOPT_SSLCERTTYPE, "PEM");
		kube_http_set_blob(call->easy, CURLOPT_SSLKEY_BLOB, &http->cred.key);
		curl_easy_setopt(call->easy, CURLOPT_SSLKEYTYPE, "PEM");
	}
	call->cred_gen = http->cred_gen;
}

/* (Re)start one attempt with what is left of the deadline. */
static int kube_http_start_attempt(kube_http_call_t *call)
{
	kube_http_t *http = call->http;
	long timeout = 0;
	if (call->deadline != 0) {
		uint64_t now = uv_now(http->loop);
		if (now >= call->deadline)
			return -1;
		timeout = (long)(call->deadline - now);
	}
	curl_easy_setopt(call->easy, CURLOPT_TIMEOUT_MS, timeout);
	char err[1024];
	if (kube_http_refresh_credentials(http, err, sizeof(err)) != 0) {
		log_error("cannot authenticate", "error", err);
		return -1;
	}
	kube_http_set_headers(call);
	buf_clear(&call->resp);
	call->errbuf[0] = '\0';
	call->retry_after_ms = -1;
	call->attempt++;
	call->attempt_start = uv_hrtime();
	if (curl_multi_add_handle(http->multi, call->easy) != CURLM_OK)
		return -1;
	call->in_multi = true;
	return 0;
}

int kube_http_request(kube_http_t *http, const kube_http_req_t *req, kube_http_cb cb, void *data,
		      kube_http_call_t **handle)
{
	if (http->closing)
		return -1;
	CURL *easy = curl_easy_init();
	if (easy == NULL)
		return -1;
	kube_http_call_t *call = xcalloc(1, sizeof(*call));
	call->http = http;
	call->easy = easy;
	call->cb = cb;
	call->on_data = req->on_data;
	call->data = data;
	call->retry = req->retry;
	call->method = xstrdup(req->method);
	buf_init(&call->resp, req->max_body ? req->max_body : KUBE_HTTP_DEFAULT_MAX_BODY);
	long timeout = req->timeout_ms ? req->timeout_ms : KUBE_HTTP_DEFAULT_TIMEOUT_MS;
	if (timeout > 0)
		call->deadline = uv_now(http->loop) + (uint64_t)timeout;
	uv_timer_init(http->loop, &call->retry_timer);
	call->retry_timer.data = call;

	char *url = xasprintf("%s%s", http->cfg.server, req->path);
	curl_easy_setopt(easy, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req->method);
	if (strcmp(req->method, "GET") != 0 || req->body != NULL) {
		call->body = xstrndup(req->body ? req->body : "", req->body ? req->body_len : 0);
		curl_easy_setopt(easy, CURLOPT_POSTFIELDS, call->body);
		curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
	}
	call->content_type = req->content_type ? xstrdup(req->content_type) : NULL;
	/*
	 * Requests share one multiplexed HTTP/2 connection; a stream (a watch)
	 * gets a connection of its own over HTTP/1.1. A watch lives for minutes
	 * and its initial events can be thousands of objects: multiplexed, every
	 * watch's stream and every request queue behind one connection's flow
	 * control, and drashift was ready later than a client-go peer at 1,000
	 * nodes for that alone (docs/architecture.md, "A cached object's memory").
	 */
	curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
			 req->on_data != NULL ? (long)CURL_HTTP_VERSION_1_1 : (long)CURL_HTTP_VERSION_2TLS);
	/*
	 * A watch's connection must never carry a request. libcurl 7.88 takes
	 * every connection to a host that has had an HTTP/2 one as one it may
	 * multiplex on: once the API server had closed both HTTP/2 connections
	 * (it answers a refused token with a 401 and a GOAWAY), curl put each
	 * next request on a watch's busy HTTP/1.1 connection, where it timed out
	 * and cut that watch, eight watches in a row: 18 s without a Lease
	 * renewal (test/integration/token_rotation.sh). curl reuses a connection
	 * only for transfers with the same TLS settings, so a watch asks for TLS
	 * 1.2 or later explicitly (the API server's own minimum, so nothing it
	 * would accept is refused) and requests leave the version to the default.
	 */
	if (req->on_data != NULL)
		curl_easy_setopt(easy, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, kube_http_on_body);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, kube_http_on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, call);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, call->errbuf);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, call);
	kube_http_setup_tls(http, easy);

	call->next = http->calls;
	if (http->calls)
		http->calls->prev = call;
	http->calls = call;
	if (kube_http_start_attempt(call) != 0) {
		kube_http_call_unlink(call);
		kube_http_call_release(call);
		return -1;
	}
	if (handle)
		*handle = call;
	return 0;
}

static void kube_http_on_cancelled(uv_timer_t *timer)
{
	kube_http_finish(timer->data, CURLE_ABORTED_BY_CALLBACK);
}

void kube_http_cancel(kube_http_call_t *call)
{
	if (call->cancelled)
		return;
	call->cancelled = true;
	if (call->in_multi) {
		curl_multi_remove_handle(call->http->multi, call->easy);
		call->in_multi = false;
	}
	uv_timer_stop(&call->retry_timer);
	uv_timer_start(&call->retry_timer, kube_http_on_cancelled, 0, 0);
}

static void kube_http_timer_closed(uv_handle_t *handle)
{
	kube_http_t *http = handle->data;
	kubeconfig_free(&http->cfg);
	exec_credential_free(&http->cred);
	free(http->token);
	free(http);
}

void kube_http_close(kube_http_t *http)
{
	if (http->closing)
		return;
	http->closing = true;
	while (http->calls != NULL) {
		kube_http_call_t *call = http->calls;
		if (call->in_multi) {
			curl_multi_remove_handle(http->multi, call->easy);
			call->in_multi = false;
		}
		call->cancelled = true;
		kube_http_finish(call, CURLE_ABORTED_BY_CALLBACK);
	}
	curl_multi_cleanup(http->multi);
	uv_timer_stop(&http->timer);
	uv_close((uv_handle_t *)&http->timer, kube_http_timer_closed);
}
