#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xalloc.h"

#define CLI_PROG "kubectl drashift"

/* One entry per verb; the order is the order of the help. */
static const cli_verb_t cli_verbs[] = {
	{ "status", "status PLAN [-w]", "the plan as a tree: pools, nodes and their steps, the gate, what it waits for",
	  cli_verb_status },
	{ "pause", "pause PLAN", "start no new node step (steps under way finish)", cli_verb_pause },
	{ "resume", "resume PLAN", "undo pause", cli_verb_resume },
	{ "promote", "promote PLAN POOL",
	  "approve POOL's expansion (promotion: Manual), or skip the rest of its canary bake (the SLO gate must still pass)",
	  cli_verb_promote },
	{ "rollback", "rollback PLAN POOL", "walk POOL back to the device plugin, one node at a time",
	  cli_verb_rollback },
	{ "acknowledge", "acknowledge PLAN", "lift the freeze of the breach recorded now", cli_verb_acknowledge },
	{ "abort", "abort PLAN", "roll every pool back to the device plugin and stay there", cli_verb_abort },
	{ "report", "report PLAN [-o FILE]", "the migration as one HTML page: timeline, signals, DRA against legacy",
	  cli_verb_report },
};
#define CLI_N_VERBS (sizeof(cli_verbs) / sizeof(cli_verbs[0]))

static void cli_help(FILE *f)
{
	fputs("Usage: " CLI_PROG " VERB [ARGS] [--kubeconfig PATH] [--context NAME]\n"
	      "\n"
	      "Watch and steer drashift's MigrationPlans.\n"
	      "\n"
	      "Verbs:\n",
	      f);
	for (size_t i = 0; i < CLI_N_VERBS; i++)
		fprintf(f, "  %-22s %s\n", cli_verbs[i].usage, cli_verbs[i].summary);
	fputs("\n"
	      "Flags:\n"
	      "  --kubeconfig PATH   kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config)\n"
	      "  --context NAME      kubeconfig context (default: current-context)\n"
	      "  -n, --namespace NS  accepted and ignored: a MigrationPlan is cluster-scoped\n"
	      "  -h, --help          print this help\n"
	      "\n"
	      "Every change is a server-side apply of the plan's spec with field manager " CLI_FIELD_MANAGER ".\n",
	      f);
}

static const cli_verb_t *cli_find_verb(const char *name)
{
	for (size_t i = 0; i < CLI_N_VERBS; i++)
		if (strcmp(cli_verbs[i].name, name) == 0)
			return &cli_verbs[i];
	return NULL;
}

static void cli_vprint(struct cli *c, const char *fmt, va_list ap)
{
	fprintf(c->err, CLI_PROG " %s: ", c->verb ? c->verb : "");
	vfprintf(c->err, fmt, ap);
	fputc('\n', c->err);
}

int cli_fail(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprint(c, fmt, ap);
	va_end(ap);
	return 1;
}

int cli_usage_error(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprint(c, fmt, ap);
	va_end(ap);
	const cli_verb_t *v = c->verb ? cli_find_verb(c->verb) : NULL;
	if (v)
		fprintf(c->err, "Usage: " CLI_PROG " %s\n", v->usage);
	return 2;
}

bool cli_invoked_as_plugin(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	return strncmp(base, "kubectl-drashift", strlen("kubectl-drashift")) == 0;
}

/*
 * Take the shared flags out of argv wherever they stand ("--context x" and
 * "--context=x"), keeping the rest in order. Returns -1 when carrying on, or
 * an exit code.
 */
static int cli_take_shared_flags(struct cli *c, int argc, char **argv, int *rest_argc, char **rest)
{
	static const struct {
		const char *lng, *shrt;
		size_t off;
	} flags[] = {
		{ "--kubeconfig", NULL, offsetof(struct cli, kubeconfig) },
		{ "--context", NULL, offsetof(struct cli, context) },
		{ "--namespace", "-n", offsetof(struct cli, ns) },
	};
	int n = 0;
	bool verbatim = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (verbatim) {
			rest[n++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			verbatim = true;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cli_help(c->out);
			return 0;
		}
		bool taken = false;
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]) && !taken; f++) {
			size_t len = strlen(flags[f].lng);
			const char **slot = (const char **)((char *)c + flags[f].off);
			if (strcmp(a, flags[f].lng) == 0 || (flags[f].shrt && strcmp(a, flags[f].shrt) == 0)) {
				if (i + 1 >= argc) {
					fprintf(c->err, CLI_PROG ": %s needs a value\n", a);
					return 2;
				}
				*slot = argv[++i];
				taken = true;
			} else if (strncmp(a, flags[f].lng, len) == 0 && a[len] == '=') {
				*slot = a + len + 1;
				taken = true;
			} else if (flags[f].shrt && strncmp(a, flags[f].shrt, 2) == 0 && a[2] != '\0') {
				*slot = a + 2 + (a[2] == '=');
				taken = true;
			}
		}
		if (!taken)
			rest[n++] = argv[i];
	}
	rest[n] = NULL;
	*rest_argc = n;
	return -1;
}

int cli_main(int argc, char **argv)
{
	struct cli c = { .out = stdout, .err = stderr, .tty = isatty(STDOUT_FILENO) == 1 };
	/* The runtime's info lines (a credential plugin ran) are for the operator's log, not a person's terminal. */
	log_set_level(LOG_WARN);
	char **rest = xcalloc((size_t)argc + 1, sizeof(char *));
	int n = 0;
	int rc = cli_take_shared_flags(&c, argc - 1, argv + 1, &n, rest);
	if (rc < 0) {
		const cli_verb_t *v = n > 0 ? cli_find_verb(rest[0]) : NULL;
		if (n == 0) {
			cli_help(c.err);
			rc = 2;
		} else if (v == NULL) {
			fprintf(c.err, CLI_PROG ": unknown verb '%s'\n", rest[0]);
			cli_help(c.err);
			rc = 2;
		} else {
			c.verb = v->name;
			rc = v->run(&c, n, rest);
		}
	}
	if (c.connected) {
		kube_http_close(c.http);
		uv_run(&c.loop, UV_RUN_DEFAULT);
		uv_loop_close(&c.loop);
		kubeconfig_free(&c.cfg);
	}
	free(rest);
	fflush(c.out);
	return rc;
}
