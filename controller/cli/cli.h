/*
 * kubectl-drashift: the kubectl plugin, a mode of drashift-controller.
 *
 * The binary runs as the plugin when its name (argv[0]'s basename) is
 * kubectl-drashift, as kubectl finds it on $PATH, or when its first argument
 * is "kubectl" (drashift-controller kubectl status demo). kubectl hands the
 * plugin every argument after "drashift".
 *
 * How a verb is added: write
 *
 *     int cli_verb_NAME(struct cli *c, int argc, char **argv);
 *
 * in a file of its own (cli_NAME.c, listed in meson.build), declare it below
 * and add one line to the table in cli.c: its name, a one-line usage and a
 * one-line summary. argv[0] is the verb's name, argv[1..argc-1] what follows
 * it with the shared flags already taken out, so a verb parses only its own
 * flags (getopt_long with optind = 0 works). A verb
 * writes its answer to c->out, problems to c->err as "kubectl drashift
 * VERB: ..." lines, and returns the exit code: 0 done, 1 failed (the API or
 * the plan said no), 2 bad usage.
 *
 * The shared flags, as kubectl reads them, anywhere on the line:
 *   --kubeconfig PATH  the kubeconfig (default: $KUBECONFIG, a colon-separated
 *                      list merged as kubectl merges it, then ~/.kube/config);
 *   --context NAME     a context of it (default: current-context);
 *   -n, --namespace NS accepted and ignored: a MigrationPlan is cluster-scoped
 *                      (kubectl get migrationplans -n x ignores it too);
 *   -h, --help.
 * In-cluster config is not read: the plugin runs where a person runs kubectl.
 * Exec credential plugins in the kubeconfig (EKS, GKE, AKS) work as they do
 * for the operator (kube/exec_credential.c).
 *
 * The client is synchronous: each call runs the libuv loop until its answer
 * is in. Writes are server-side apply with field manager kubectl-drashift,
 * the way a person's kubectl apply --server-side would write them.
 */
#ifndef DRASHIFT_CLI_H
#define DRASHIFT_CLI_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <uv.h>

#include "kube_http.h"
#include "kubeconfig.h"

#define CLI_FIELD_MANAGER "kubectl-drashift"
#define CLI_PLAN_API "drashift.io/v1alpha1"
#define CLI_PLAN_RESOURCE "migrationplans"

struct cli {
	const char *verb;      /* the verb being run, for messages */
	const char *kubeconfig; /* --kubeconfig, or NULL */
	const char *context;    /* --context, or NULL */
	const char *ns;         /* -n, accepted for kubectl's sake; plans have none */
	kubeconfig_t cfg;       /* loaded on the first request */
	bool connected;
	uv_loop_t loop;
	kube_http_t *http;
	FILE *out, *err;
	bool tty;               /* out is a terminal: -w may redraw in place */
};

typedef struct {
	const char *name;
	const char *usage;   /* "status PLAN [-w]" */
	const char *summary; /* one line for the verb list */
	int (*run)(struct cli *c, int argc, char **argv);
} cli_verb_t;

/*
 * The plugin's main: argv[0] is the program's name, then the verb and the
 * rest. Returns the exit code.
 */
int cli_main(int argc, char **argv);

/* Whether argv[0] names the plugin (kubectl-drashift, any folder, any suffix such as .exe). */
bool cli_invoked_as_plugin(const char *argv0);

/* An answer of the API server. body and error are owned; error is NULL on 2xx. */
typedef struct {
	long status;  /* HTTP status; 0: no answer (error says why) */
	char *body;
	char *error;  /* one line a person can act on */
	char *reason; /* the API Status reason (NotFound, Conflict), or NULL */
} cli_response_t;

void cli_response_free(cli_response_t *r);

/*
 * GET path, synchronous: connects on first use (kubeconfig, exec
 * credential), runs the loop until the answer is in. Returns 0 with *out
 * filled (whatever the status), or -1 when the request could not start
 * (out->error says why). Another kind of request follows cli_apply() in
 * cli_client.c: start it with kube_api.h, then cli_wait() for it.
 */
int cli_get(struct cli *c, const char *path, cli_response_t *out);

/*
 * GET path and decode the JSON. Returns the object (free with cJSON_Delete),
 * or NULL after writing "kubectl drashift VERB: ..." to c->err. When
 * not_found is not NULL a 404 is no error: NULL is returned with *not_found set.
 */
cJSON *cli_get_json(struct cli *c, const char *path, bool *not_found);

/* The MigrationPlan named name (a 404 says "migrationplan NAME not found"). NULL after an error line. */
cJSON *cli_get_plan(struct cli *c, const char *name);

/*
 * Server-side apply of obj (apiVersion, kind, metadata.name and the fields to
 * own) at path as field manager kubectl-drashift, force on: a person's
 * command takes the field over from whoever set it. Returns the object as
 * stored, or NULL after an error line. When obj carries
 * metadata.resourceVersion the write fails with 409 if the object changed
 * since it was read; *conflict is then set (may be NULL) and no line written.
 */
cJSON *cli_apply(struct cli *c, const char *path, const cJSON *obj, bool *conflict);

/* Whether the JSON array holds the string s. */
bool cli_has_string(const cJSON *array, const char *s);

/* Write "kubectl drashift VERB: <message>\n" to c->err. Returns 1 (the exit code of a failure). */
int cli_fail(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, for bad usage: adds the verb's usage line. Returns 2. */
int cli_usage_error(struct cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The verbs (one file each). */
int cli_verb_status(struct cli *c, int argc, char **argv);
int cli_verb_pause(struct cli *c, int argc, char **argv);
int cli_verb_resume(struct cli *c, int argc, char **argv);
int cli_verb_promote(struct cli *c, int argc, char **argv);
int cli_verb_rollback(struct cli *c, int argc, char **argv);
int cli_verb_acknowledge(struct cli *c, int argc, char **argv);
int cli_verb_abort(struct cli *c, int argc, char **argv);
int cli_verb_report(struct cli *c, int argc, char **argv);

#endif
