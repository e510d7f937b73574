/*
 * drashift-controller: moves node pools from device plugins to DRA.
 *
 * main() reads flags and the kubeconfig, then either checks the connection
 * (--check) or hands over to the manager, which runs until SIGTERM.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cli.h"
#include "kube_http.h"
#include "kubeconfig.h"
#include "log.h"
#include "manager.h"
#include "xalloc.h"

typedef struct {
	const char *kubeconfig;
	const char *context;
	long timeout_ms;
	bool check;
	manager_options_t manager;
} main_options_t;

typedef struct {
	kube_http_t *http;
	const char *server;
	int exit_code;
} main_probe_t;

static void main_usage(FILE *f)
{
	fputs("Usage: drashift-controller [options]\n"
	      "\n"
	      "Moves GPU/FPGA/NIC node pools from device plugins to Dynamic Resource\n"
	      "Allocation, driven by MigrationPlan objects.\n"
	      "\n"
	      "Options:\n"
	      "  --kubeconfig PATH             kubeconfig to use (default: $KUBECONFIG, in-cluster,\n"
	      "                                then ~/.kube/config)\n"
	      "  --context NAME                kubeconfig context (default: current-context)\n"
	      "  --check                       connect, print the server version and exit\n"
	      "  --dry-run                     log every action it would take, change nothing\n"
	      "  --timeout DURATION            deadline for --check (default 30s)\n"
	      "  --http-bind-address ADDR      /healthz /readyz /metrics (default :8080)\n"
	      "  --leader-elect BOOL           elect one active replica on a Lease (default true)\n"
	      "  --leader-elect-namespace NS   the Lease's namespace, where the Secret of\n"
	      "                                spec.slo.prometheus.secretName is read too\n"
	      "                                (default $POD_NAMESPACE or drashift-system)\n"
	      "  --leader-elect-id NAME        the Lease's name (default drashift-controller)\n"
	      "  --leader-elect-lease-duration DURATION   (default 15s)\n"
	      "  --leader-elect-renew-deadline DURATION   (default 10s)\n"
	      "  --leader-elect-retry-period DURATION     (default 2s)\n"
	      "  --identity NAME               this replica's name (default $POD_NAME or host_pid)\n"
	      "  --log-level LEVEL             debug, info, warn or error (default info)\n"
	      "  --version                     print the version and exit\n"
	      "  --help                        print this help and exit\n"
	      "\n"
	      "Durations: 500ms, 15s, 2m. SIGTERM releases the Lease and exits 0.\n",
	      f);
}

/* "500ms", "15s", "2m", "1h": a positive duration up to a day, every error checked. */
static int main_parse_duration(const char *s, uint64_t *out_ms)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || v <= 0)
		return -1;
	uint64_t unit;
	if (strcmp(end, "ms") == 0)
		unit = 1;
	else if (strcmp(end, "s") == 0)
		unit = 1000;
	else if (strcmp(end, "m") == 0)
		unit = 60000;
	else if (strcmp(end, "h") == 0)
		unit = 3600000;
	else
		return -1;
	if ((uint64_t)v > 86400000u / unit)
		return -1;
	*out_ms = (uint64_t)v * unit;
	return 0;
}

static int main_parse_bool(const char *s, bool *out)
{
	if (strcmp(s, "true") == 0)
		*out = true;
	else if (strcmp(s, "false") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

static int main_parse_args(int argc, char **argv, main_options_t *opt)
{
	enum {
		OPT_KUBECONFIG = 1,
		OPT_CONTEXT,
		OPT_CHECK,
		OPT_DRY_RUN,
		OPT_TIMEOUT,
		OPT_HTTP,
		OPT_LEADER_ELECT,
		OPT_LEASE_NS,
		OPT_LEASE_ID,
		OPT_LEASE_DURATION,
		OPT_RENEW_DEADLINE,
		OPT_RETRY_PERIOD,
		OPT_IDENTITY,
		OPT_LOG_LEVEL,
		OPT_VERSION,
		OPT_HELP,
	};
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "http-bind-address", required_argument, NULL, OPT_HTTP },
		{ "leader-elect", required_argument, NULL, OPT_LEADER_ELECT },
		{ "leader-elect-namespace", required_argument, NULL, OPT_LEASE_NS },
		{ "leader-elect-id", required_argument, NULL, OPT_LEASE_ID },
		{ "leader-elect-lease-duration", required_argument, NULL, OPT_LEASE_DURATION },
		{ "leader-elect-renew-deadline", required_argument, NULL, OPT_RENEW_DEADLINE },
		{ "leader-elect-retry-period", required_argument, NULL, OPT_RETRY_PERIOD },
		{ "identity", required_argument, NULL, OPT_IDENTITY },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;
	int c, longindex;
	uint64_t ms;
	while ((c = getopt_long(argc, argv, "", longopts, &longindex)) != -1) {
		uint64_t *duration = NULL;
		switch (c) {
		case OPT_KUBECONFIG:
			opt->kubeconfig = optarg;
			break;
		case OPT_CONTEXT:
			opt->context = optarg;
			break;
		case OPT_CHECK:
			opt->check = true;
			break;
		case OPT_DRY_RUN:
			opt->manager.dry_run = true;
			break;
		case OPT_TIMEOUT:
			if (main_parse_duration(optarg, &ms) != 0) {
				fprintf(stderr, "drashift-controller: --timeout: '%s' is not a duration (500ms, 15s, 2m)\n", optarg);
				return 2;
			}
			opt->timeout_ms = (long)ms;
			break;
		case OPT_HTTP:
			opt->manager.http_address = optarg;
			break;
		case OPT_LEADER_ELECT:
			if (main_parse_bool(optarg, &opt->manager.leader_elect) != 0) {
				fprintf(stderr, "drashift-controller: --leader-elect: '%s' is not true or false\n", optarg);
				return 2;
			}
			break;
		case OPT_LEASE_NS:
			opt->manager.lease_namespace = optarg;
			break;
		case OPT_LEASE_ID:
			opt->manager.lease_name = optarg;
			break;
		case OPT_LEASE_DURATION:
			duration = &opt->manager.lease_duration_ms;
			break;
		case OPT_RENEW_DEADLINE:
			duration = &opt->manager.renew_deadline_ms;
			break;
		case OPT_RETRY_PERIOD:
			duration = &opt->manager.retry_period_ms;
			break;
		case OPT_IDENTITY:
			opt->manager.identity = optarg;
			break;
		case OPT_LOG_LEVEL: {
			log_level_t level;
			if (log_parse_level(optarg, &level) != 0) {
				fprintf(stderr, "drashift-controller: --log-level: unknown level '%s'\n", optarg);
				return 2;
			}
			log_set_level(level);
			break;
		}
		case OPT_VERSION:
			printf("drashift-controller %s\n", DRASHIFT_VERSION);
			return 0;
		case OPT_HELP:
			main_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "drashift-controller: unknown or incomplete option '%s'\n", argv[optind - 1]);
			main_usage(stderr);
			return 2;
		}
		if (duration != NULL && main_parse_duration(optarg, duration) != 0) {
			/* Named from the table: "--flag=value" is one argv entry, "--flag value" two. */
			fprintf(stderr, "drashift-controller: --%s: '%s' is not a duration (500ms, 15s, 2m)\n",
				longopts[longindex].name, optarg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "drashift-controller: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1; /* carry on */
}

static void main_on_version(const kube_http_response_t *resp, void *data)
{
	main_probe_t *probe = data;
	if (resp->error != NULL) {
		log_error("cannot reach the API server", "server", probe->server, "error", resp->error);
		probe->exit_code = 1;
	} else {
		cJSON *v = cJSON_ParseWithLength(resp->body, resp->body_len);
		const cJSON *git = cJSON_GetObjectItemCaseSensitive(v, "gitVersion");
		if (cJSON_IsString(git)) {
			const char *proto = resp->http_major == 2 ? "HTTP/2" : resp->http_major == 3 ? "HTTP/3" : "HTTP/1.1";
			log_info("connected", "server", probe->server, "version", git->valuestring, "protocol", proto);
			printf("server %s: Kubernetes %s (%s)\n", probe->server, git->valuestring, proto);
			probe->exit_code = 0;
		} else {
			log_error("the API server's /version answer has no gitVersion", "server", probe->server);
			probe->exit_code = 1;
		}
		cJSON_Delete(v);
	}
	kube_http_close(probe->http);
}

/* --check: connect, print the server version, exit. */
static int main_check(const kubeconfig_t *cfg, long timeout_ms)
{
	char err[512];
	uv_loop_t loop;
	uv_loop_init(&loop);
	main_probe_t probe = { .server = cfg->server, .exit_code = 1 };
	if (kube_http_init(&loop, cfg, &probe.http, err, sizeof(err)) != 0) {
		log_error("cannot create the API client", "error", err);
		uv_loop_close(&loop);
		return 1;
	}
	kube_http_req_t req = { .method = "GET", .path = "/version", .timeout_ms = timeout_ms, .retry = 1 };
	if (kube_http_request(probe.http, &req, main_on_version, &probe, NULL) != 0) {
		log_error("cannot start a request", "server", cfg->server);
		kube_http_close(probe.http);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return probe.exit_code;
}

int main(int argc, char **argv)
{
	/* cJSON allocates through xmalloc too: out of memory ends in xalloc.c, never in a NULL. */
	cJSON_Hooks hooks = { .malloc_fn = xmalloc, .free_fn = free };
	cJSON_InitHooks(&hooks);
	/* kubectl-drashift (a link to this binary, found by kubectl on $PATH), or drashift-controller kubectl ... */
	if (argc > 0 && cli_invoked_as_plugin(argv[0]))
		return cli_main(argc, argv);
	if (argc > 1 && strcmp(argv[1], "kubectl") == 0)
		return cli_main(argc - 1, argv + 1);
	main_options_t opt = {
		.timeout_ms = 30000,
		.manager = {
			.http_address = ":8080",
			.leader_elect = true,
			.lease_name = "drashift-controller",
			.lease_duration_ms = 15000,
			.renew_deadline_ms = 10000,
			.retry_period_ms = 2000,
		},
	};
	int rc = main_parse_args(argc, argv, &opt);
	if (rc >= 0)
		return rc;
	if (opt.manager.lease_namespace == NULL)
		opt.manager.lease_namespace = getenv("POD_NAMESPACE") ? getenv("POD_NAMESPACE") : "drashift-system";
	char *identity = NULL;
	if (opt.manager.identity == NULL) {
		char host[256] = "drashift";
		gethostname(host, sizeof(host) - 1);
		identity = getenv("POD_NAME") ? xstrdup(getenv("POD_NAME")) : xasprintf("%s_%d", host, (int)getpid());
		opt.manager.identity = identity;
	}

	char err[512];
	kubeconfig_t cfg = { 0 };
	if (kubeconfig_load(opt.kubeconfig, opt.context, &cfg, err, sizeof(err)) != 0) {
		log_error("invalid configuration", "error", err);
		free(identity);
		return 1;
	}
	rc = opt.check ? main_check(&cfg, opt.timeout_ms) : manager_run(&cfg, &opt.manager);
	kubeconfig_free(&cfg);
	free(identity);
	return rc;
}
