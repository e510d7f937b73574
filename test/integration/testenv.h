/*
 * For C integration tests: a real control plane from tools/testenv, started
 * in a fresh folder and stopped by the test, and small helpers to act on it
 * with its kubectl. Nothing here imitates the API server.
 */
#ifndef DRASHIFT_TEST_TESTENV_H
#define DRASHIFT_TEST_TESTENV_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "kube_http.h"

typedef struct {
	char dir[256];        /* the control plane's folder */
	char kubeconfig[300]; /* DIR/kubeconfig (admin) */
} testenv_t;

/* Start a control plane; extra_apiserver_flags may be NULL. Aborts the test run on failure. */
void testenv_up(testenv_t *env, const char *name, const char *extra_apiserver_flags);
/* Stop it and remove its folder. */
void testenv_down(testenv_t *env);
/* tools/testenv ACTION DIR COMPONENT (stop, start, restart). Returns the exit status. */
int testenv_component(testenv_t *env, const char *action, const char *component);

/* Run a shell command with KUBECONFIG and PATH set for env; returns its exit status. */
int testenv_sh(testenv_t *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, capturing stdout (malloc'ed, NUL-terminated) into *out. */
int testenv_sh_output(testenv_t *env, char **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Run loop until done(data) or timeout; returns done's final answer. */
bool testenv_run_until(uv_loop_t *loop, bool (*done)(void *data), void *data, unsigned timeout_ms);

/*
 * A client of the API server the kubeconfig file names, on loop (initialised
 * here). Aborts the test run with the reason when it cannot be made.
 */
kube_http_t *testenv_client_open(uv_loop_t *loop, const char *kubeconfig);
/* Close the client, run loop until it is idle and close it: 0 when nothing was left open. */
int testenv_client_close(uv_loop_t *loop, kube_http_t *http);

/* One request's answer, kept past its callback: pass testenv_on_result and a zeroed result. */
typedef struct {
	bool done;
	long status;
	char *body;   /* "" when none */
	char *error;  /* NULL on 2xx */
	char *reason; /* the API Status reason or NULL */
	int http_major; /* the protocol it came in: 1 or 2 */
} testenv_result_t;

void testenv_on_result(const kube_http_response_t *resp, void *data);
/* Run loop until r has its answer; false on timeout. */
bool testenv_result_wait(uv_loop_t *loop, testenv_result_t *r, unsigned timeout_ms);
void testenv_result_free(testenv_result_t *r);

#endif
