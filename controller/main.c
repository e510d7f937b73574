/*
 * drashift-controller: moves node pools from device plugins to DRA.
 *
 * For now the process connects to the API server, reports the server's
 * version and exits; the runtime (caches, work queue, leader election) and the
 * reconcilers arrive with the issues that build them.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "kube_http.h"
#include "kubeconfig.h"
#include "log.h"

typedef struct {
	const char *kubeconfig;
	const char *context;
	long timeout_ms;
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
	      "  --kubeconfig PATH   kubeconfig to use (default: $KUBECONFIG, in-cluster,\n"
	      "                      then ~/.kube/config)\n"
	      "  --context NAME      kubeconfig context (default: current-context)\n"
	      "  --timeout SECONDS   deadline for reaching the API server (default 30)\n"
	      "  --log-level LEVEL   debug, info, warn or error (default info)\n"
	      "  --version           print the version and exit\n"
	      "  --help              print this help and exit\n",
	      f);
}

/* Parse a positive whole number of seconds; strtol with every error checked. */
static int main_parse_seconds(const char *s, long *out_ms)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 86400)
		return -1;
	*out_ms = v * 1000;
	return 0;
}

static int main_parse_args(int argc, char **argv, main_options_t *opt)
{
	enum { OPT_KUBECONFIG = 1, OPT_CONTEXT, OPT_TIMEOUT, OPT_LOG_LEVEL, OPT_VERSION, OPT_HELP };
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KUBECONFIG:
			opt->kubeconfig = optarg;
			break;
		case OPT_CONTEXT:
			opt->context = optarg;
			break;
		case OPT_TIMEOUT:
			if (main_parse_seconds(optarg, &opt->timeout_ms) != 0) {
				fprintf(stderr, "drashift-controller: --timeout: '%s' is not a number of seconds\n", optarg);
				return 2;
			}
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
			log_info("connected", "server", probe->server, "version", git->valuestring);
			printf("server %s: Kubernetes %s\n", probe->server, git->valuestring);
			probe->exit_code = 0;
		} else {
			log_error("the API server's /version answer has no gitVersion", "server", probe->server);
			probe->exit_code = 1;
		}
		cJSON_Delete(v);
	}
	kube_http_close(probe->http);
}

int main(int argc, char **argv)
{
	main_options_t opt = { .timeout_ms = 30000 };
	int rc = main_parse_args(argc, argv, &opt);
	if (rc >= 0)
		return rc;

	char err[512];
	kubeconfig_t cfg = { 0 };
	if (kubeconfig_load(opt.kubeconfig, opt.context, &cfg, err, sizeof(err)) != 0) {
		log_error("invalid configuration", "error", err);
		return 1;
	}

	uv_loop_t loop;
	uv_loop_init(&loop);
	main_probe_t probe = { .server = cfg.server, .exit_code = 1 };
	if (kube_http_init(&loop, &cfg, &probe.http, err, sizeof(err)) != 0) {
		log_error("cannot create the API client", "error", err);
		kubeconfig_free(&cfg);
		uv_loop_close(&loop);
		return 1;
	}
	kube_http_req_t req = { .method = "GET", .path = "/version", .timeout_ms = opt.timeout_ms, .retry = 1 };
	if (kube_http_request(probe.http, &req, main_on_version, &probe, NULL) != 0) {
		log_error("cannot start a request", "server", cfg.server);
		kube_http_close(probe.http);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	kubeconfig_free(&cfg);
	return probe.exit_code;
}
