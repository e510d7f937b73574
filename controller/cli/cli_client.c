/*
 * The plugin's synchronous client: kube_http on a loop of its own, run until
 * each answer is in.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "kube_api.h"
#include "xalloc.h"

typedef struct {
	bool done;
	cli_response_t *out;
} cli_call_t;

void cli_response_free(cli_response_t *r)
{
	free(r->body);
	free(r->error);
	free(r->reason);
	memset(r, 0, sizeof(*r));
}

/* kubectl's order: --kubeconfig, $KUBECONFIG, ~/.kube/config. In-cluster is for the operator. */
static int cli_connect(struct cli *c, char *err, size_t errlen)
{
	char *home_config = NULL;
	const char *path = c->kubeconfig;
	if (path == NULL && getenv("KUBECONFIG") != NULL && getenv("KUBECONFIG")[0] != '\0')
		path = getenv("KUBECONFIG");
	if (path == NULL) {
		const char *home = getenv("HOME");
		struct stat st;
		if (home != NULL)
			home_config = xasprintf("%s/.kube/config", home);
		if (home_config == NULL || stat(home_config, &st) != 0) {
			snprintf(err, errlen, "no kubeconfig: pass --kubeconfig, set $KUBECONFIG or write ~/.kube/config");
			free(home_config);
			return -1;
		}
		path = home_config;
	}
	int rc = kubeconfig_load_files(path, c->context, &c->cfg, err, errlen);
	free(home_config);
	if (rc != 0)
		return -1;
	uv_loop_init(&c->loop);
	if (kube_http_init(&c->loop, &c->cfg, &c->http, err, errlen) != 0) {
		uv_loop_close(&c->loop);
		kubeconfig_free(&c->cfg);
		return -1;
	}
	c->connected = true;
	return 0;
}

static void cli_on_response(const kube_http_response_t *resp, void *data)
{
	cli_call_t *call = data;
	call->out->status = resp->status;
	call->out->body = xstrndup(resp->body ? resp->body : "", resp->body ? resp->body_len : 0);
	call->out->error = resp->error ? xstrdup(resp->error) : NULL;
	call->out->reason = resp->reason ? xstrdup(resp->reason) : NULL;
	call->done = true;
}

/* Connect on first use; 0, or -1 with out->error set. */
static int cli_ready(struct cli *c, cli_response_t *out)
{
	memset(out, 0, sizeof(*out));
	char err[1024];
	if (!c->connected && cli_connect(c, err, sizeof(err)) != 0) {
		out->error = xstrdup(err);
		return -1;
	}
	return 0;
}

/* Run the loop until the call that started (started == 0) has its answer. */
static int cli_wait(struct cli *c, int started, cli_call_t *call)
{
	if (started != 0) {
		call->out->error = xasprintf("cannot start a request to %s", c->cfg.server);
		return -1;
	}
	while (!call->done)
		uv_run(&c->loop, UV_RUN_ONCE);
	return 0;
}

int cli_get(struct cli *c, const char *path, cli_response_t *out)
{
	if (cli_ready(c, out) != 0)
		return -1;
	cli_call_t call = { .out = out };
	return cli_wait(c, kube_get(c->http, path, cli_on_response, &call), &call);
}

cJSON *cli_get_json(struct cli *c, const char *path, bool *not_found)
{
	cli_response_t r;
	if (not_found)
		*not_found = false;
	if (cli_get(c, path, &r) != 0) {
		cli_fail(c, "%s", r.error);
		cli_response_free(&r);
		return NULL;
	}
	cJSON *obj = NULL;
	if (r.status == 404 && not_found) {
		*not_found = true;
	} else if (r.error) {
		cli_fail(c, "GET %s: %s", path, r.error);
	} else if ((obj = cJSON_Parse(r.body)) == NULL) {
		cli_fail(c, "GET %s: the answer is not JSON", path);
	}
	cli_response_free(&r);
	return obj;
}

cJSON *cli_get_plan(struct cli *c, const char *name)
{
	char *path = kube_path(CLI_PLAN_API, CLI_PLAN_RESOURCE, NULL, name, NULL);
	bool not_found;
	cJSON *plan = cli_get_json(c, path, &not_found);
	free(path);
	if (not_found)
		cli_fail(c, "migrationplan %s not found (kubectl get migrationplans lists them)", name);
	return plan;
}

cJSON *cli_apply(struct cli *c, const char *path, const cJSON *obj, bool *conflict)
{
	if (conflict)
		*conflict = false;
	cli_response_t r;
	int rc = cli_ready(c, &r);
	if (rc == 0) {
		char *body = cJSON_PrintUnformatted(obj);
		cli_call_t call = { .out = &r };
		rc = cli_wait(c, kube_apply_as(c->http, path, body, CLI_FIELD_MANAGER, true, cli_on_response, &call),
			      &call);
		free(body);
	}
	cJSON *stored = NULL;
	if (rc != 0)
		cli_fail(c, "%s", r.error);
	else if (r.status == 409 && conflict)
		*conflict = true;
	else if (r.error)
		cli_fail(c, "apply %s: %s", path, r.error);
	else if ((stored = cJSON_Parse(r.body)) == NULL)
		cli_fail(c, "apply %s: the answer is not JSON", path);
	cli_response_free(&r);
	return stored;
}

bool cli_has_string(const cJSON *array, const char *s)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, array)
	{
		if (cJSON_IsString(v) && strcmp(v->valuestring, s) == 0)
			return true;
	}
	return false;
}
