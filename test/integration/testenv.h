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

#endif
