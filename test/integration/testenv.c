#include "testenv.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeconfig.h"
#include "xalloc.h"

static const char *testenv_root(void)
{
	const char *root = getenv("DRASHIFT_ROOT");
	if (root == NULL) {
		fprintf(stderr, "DRASHIFT_ROOT is not set (meson test sets it)\n");
		exit(1);
	}
	return root;
}

static int testenv_status(int rc)
{
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

void testenv_up(testenv_t *env, const char *name, const char *extra_apiserver_flags)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(env->dir, sizeof(env->dir), "%s/drashift-%s.XXXXXX", tmp, name);
	if (mkdtemp(env->dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	char *cmd = xasprintf("TESTENV_APISERVER_FLAGS='%s' '%s/tools/testenv' up '%s/cluster'",
			      extra_apiserver_flags ? extra_apiserver_flags : "", testenv_root(), env->dir);
	FILE *p = popen(cmd, "r");
	free(cmd);
	if (p == NULL || fgets(env->kubeconfig, sizeof(env->kubeconfig), p) == NULL) {
		fprintf(stderr, "tools/testenv up failed (folder %s)\n", env->dir);
		exit(1);
	}
	env->kubeconfig[strcspn(env->kubeconfig, "\n")] = '\0';
	if (testenv_status(pclose(p)) != 0) {
		fprintf(stderr, "tools/testenv up failed (folder %s)\n", env->dir);
		exit(1);
	}
}

void testenv_down(testenv_t *env)
{
	char *cmd = xasprintf("'%s/tools/testenv' down '%s/cluster' && rm -rf '%s'", testenv_root(),
			      env->dir, env->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tools/testenv down %s failed\n", env->dir);
	free(cmd);
}

int testenv_component(testenv_t *env, const char *action, const char *component)
{
	char *cmd = xasprintf("'%s/tools/testenv' %s '%s/cluster' %s", testenv_root(), action, env->dir,
			      component);
	int rc = testenv_status(system(cmd));
	free(cmd);
	return rc;
}

static char *testenv_command(testenv_t *env, const char *fmt, va_list ap)
{
	char *user;
	if (vasprintf(&user, fmt, ap) < 0)
		abort();
	char *cmd = xasprintf("export KUBECONFIG='%s' PATH='%s/cluster/bin':\"$PATH\"; %s", env->kubeconfig,
			      env->dir, user);
	free(user);
	return cmd;
}

/*
 * Run cmd under bash (not /bin/sh: tests use bash features), stdout to
 * out_fd when it is not -1. Returns the exit status.
 */
static int testenv_bash(const char *cmd, int out_fd)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out_fd >= 0)
			dup2(out_fd, 1);
		execlp("bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		;
	return testenv_status(status);
}

int testenv_sh(testenv_t *env, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = testenv_command(env, fmt, ap);
	va_end(ap);
	int rc = testenv_bash(cmd, -1);
	free(cmd);
	return rc;
}

int testenv_sh_output(testenv_t *env, char **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = testenv_command(env, fmt, ap);
	va_end(ap);
	FILE *tmp = tmpfile();
	int rc = tmp ? testenv_bash(cmd, fileno(tmp)) : -1;
	free(cmd);
	size_t len = 0, cap = 4096;
	char *buf = xmalloc(cap);
	size_t n;
	if (tmp) {
		rewind(tmp);
		while ((n = fread(buf + len, 1, cap - len - 1, tmp)) > 0) {
			len += n;
			if (cap - len < 2)
				buf = xrealloc(buf, cap *= 2);
		}
		fclose(tmp);
	}
	buf[len] = '\0';
	*out = buf;
	return rc;
}

static void testenv_tick(uv_timer_t *t)
{
	(void)t;
}

bool testenv_run_until(uv_loop_t *loop, bool (*done)(void *data), void *data, unsigned timeout_ms)
{
	uv_timer_t tick;
	uv_timer_init(loop, &tick);
	uv_timer_start(&tick, testenv_tick, 50, 50);
	uint64_t deadline = uv_now(loop) + timeout_ms;
	bool ok;
	while (!(ok = done(data)) && uv_now(loop) < deadline)
		uv_run(loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
	return ok;
}

kube_http_t *testenv_client_open(uv_loop_t *loop, const char *kubeconfig)
{
	char err[512];
	kubeconfig_t cfg;
	kube_http_t *http = NULL;
	if (kubeconfig_load_files(kubeconfig, NULL, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "testenv: %s\n", err);
		abort();
	}
	uv_loop_init(loop);
	if (kube_http_init(loop, &cfg, &http, err, sizeof(err)) != 0) {
		fprintf(stderr, "testenv: %s\n", err);
		abort();
	}
	kubeconfig_free(&cfg);
	return http;
}

int testenv_client_close(uv_loop_t *loop, kube_http_t *http)
{
	kube_http_close(http);
	uv_run(loop, UV_RUN_DEFAULT);
	return uv_loop_close(loop);
}

void testenv_on_result(const kube_http_response_t *resp, void *data)
{
	testenv_result_t *r = data;
	r->done = true;
	r->status = resp->status;
	r->http_major = resp->http_major;
	r->body = xstrdup(resp->body ? resp->body : "");
	r->error = resp->error ? xstrdup(resp->error) : NULL;
	r->reason = resp->reason ? xstrdup(resp->reason) : NULL;
}

static bool testenv_result_done(void *data)
{
	return ((testenv_result_t *)data)->done;
}

bool testenv_result_wait(uv_loop_t *loop, testenv_result_t *r, unsigned timeout_ms)
{
	return testenv_run_until(loop, testenv_result_done, r, timeout_ms);
}

void testenv_result_free(testenv_result_t *r)
{
	free(r->body);
	free(r->error);
	free(r->reason);
	*r = (testenv_result_t){ 0 };
}
