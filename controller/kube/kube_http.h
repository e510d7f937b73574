/*
 * Asynchronous requests to the Kubernetes API server on the libuv loop.
 *
 * One kube_http_t per API server: a libcurl multi handle driven by the loop
 * through curl's socket API (uv_poll per socket, one uv_timer for curl's
 * timeouts), so any number of requests and watches run on one thread without
 * blocking it. Requests share one HTTP/2 connection when the server offers
 * it; a streamed request (a watch) gets an HTTP/1.1 connection of its own.
 *
 * Like libuv's requests: when kube_http_request() returns an error, the
 * callback is never called; when it returns 0, the callback is called exactly
 * once, from the loop, never from inside kube_http_request() itself.
 */
#ifndef DRASHIFT_KUBE_HTTP_H
#define DRASHIFT_KUBE_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "kubeconfig.h"

typedef struct kube_http kube_http_t;
typedef struct kube_http_call kube_http_call_t;

typedef struct {
	long status;        /* HTTP status code; 0 when no answer arrived */
	const char *body;   /* response body, NUL-terminated (may be empty) */
	size_t body_len;
	/*
	 * For anything but 2xx: what went wrong, in words a person can act on.
	 * The API's Status message when the server sent one, otherwise curl's
	 * transport error or the HTTP status line. NULL on success.
	 */
	const char *error;
	const char *reason; /* the API Status reason (NotFound, Conflict, ...) or NULL */
	int http_major;     /* the protocol the answer came in: 1 or 2 (0: no answer) */
} kube_http_response_t;

typedef void (*kube_http_cb)(const kube_http_response_t *resp, void *data);

/*
 * Streaming (watches): body bytes of a 2xx answer go here as they arrive
 * instead of being buffered. Return 0 to go on, non-zero to end the request
 * (its callback then reports the error "stream ended by the receiver").
 */
typedef int (*kube_http_data_cb)(const char *bytes, size_t len, void *data);

typedef struct {
	const char *method;       /* GET, POST, PUT, PATCH, DELETE */
	const char *path;         /* /api/v1/nodes?limit=500, already escaped */
	const char *content_type; /* for a body: application/json, application/merge-patch+json, ... */
	const char *body;
	size_t body_len;
	/*
	 * Whole-request deadline, retries included; 0 means the client default
	 * (30 s), -1 none (a watch, which the server ends after timeoutSeconds).
	 */
	long timeout_ms;
	size_t max_body;          /* cap on a buffered response body; 0 means 64 MiB */
	/*
	 * Retry 429 and 5xx answers and transport errors, with jittered
	 * exponential backoff (Retry-After honoured), until the deadline. Safe for
	 * reads, patches and apply; a caller that creates must handle a retried
	 * CREATE answering AlreadyExists.
	 */
	int retry;
	kube_http_data_cb on_data; /* stream instead of buffer (2xx bodies only), over a connection of its own (HTTP/1.1) */
} kube_http_req_t;

/* Create a client for cfg on loop. Returns 0, or -1 with one line in err. */
int kube_http_init(uv_loop_t *loop, const kubeconfig_t *cfg, kube_http_t **out, char *err,
		   size_t errlen);

/*
 * Start a request. If handle is not NULL it receives a handle for
 * kube_http_cancel(), valid until the callback has been called.
 */
int kube_http_request(kube_http_t *http, const kube_http_req_t *req, kube_http_cb cb, void *data,
		      kube_http_call_t **handle);

/*
 * End a request early. Its callback runs later from the loop (never inside
 * this call) with status 0 and the error "cancelled". Not from the call's own
 * on_data callback: return non-zero there instead.
 */
void kube_http_cancel(kube_http_call_t *call);

/*
 * Observe every attempt (for metrics): method, HTTP status (0 for a
 * transport error) and seconds it took.
 */
typedef void (*kube_http_observer_cb)(const char *method, long status, double seconds, void *data);
void kube_http_set_observer(kube_http_t *http, kube_http_observer_cb cb, void *data);

/*
 * Abort what is in flight (their callbacks run with status 0 and an error
 * saying the client closed) and free the client once libuv has closed its
 * handles. The loop must keep running until then.
 */
void kube_http_close(kube_http_t *http);

#endif
