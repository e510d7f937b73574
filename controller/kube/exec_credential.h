/*
 * Exec credential plugins (users[].user.exec in a kubeconfig), as
 * k8s.io/client-go/plugin/pkg/client/auth/exec runs them: the command runs
 * with its args and env (no shell), with KUBERNETES_EXEC_INFO describing the
 * request, and prints an ExecCredential on stdout whose status holds a bearer
 * token or a client certificate and key, and maybe an expiry.
 *
 * The plugin gets no terminal (stdin is /dev/null, spec.interactive false).
 * A run is synchronous and bounded by a timeout, after which the plugin is
 * killed: see kube_http.c for why that is acceptable on the loop.
 */
#ifndef DRASHIFT_EXEC_CREDENTIAL_H
#define DRASHIFT_EXEC_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>

#include "kubeconfig.h"

/*
 * How long a plugin may run before it is killed and its run counts as failed:
 * at start, before the loop serves anything, and later, while the loop waits
 * (half the Lease's default renew deadline).
 */
#define EXEC_CREDENTIAL_START_TIMEOUT_MS 30000u
#define EXEC_CREDENTIAL_TIMEOUT_MS 5000u
/* After a failed run, requests fail at once for this long instead of running the plugin again. */
#define EXEC_CREDENTIAL_RETRY_MS 10000u

typedef struct {
	char *token;            /* status.token, or NULL */
	kubeconfig_blob_t cert; /* status.clientCertificateData (PEM), or data NULL */
	kubeconfig_blob_t key;  /* status.clientKeyData (PEM), or data NULL */
	int64_t expiry_us;      /* status.expirationTimestamp (Unix µs); 0: does not expire */
} exec_credential_t;

/*
 * Decode a plugin's stdout: an ExecCredential of api_version with a token or
 * a certificate and key (both). Returns 0, or -1 with one line in err.
 */
int exec_credential_decode(const char *json, size_t len, const char *api_version, exec_credential_t *out,
			   char *err, size_t errlen);

/* The KUBERNETES_EXEC_INFO value for cfg's plugin (with the cluster when it asks). Free it. */
char *exec_credential_info(const kubeconfig_t *cfg);

/*
 * Run cfg->exec and decode what it prints. A plugin that cannot start, exits
 * non-zero, outlives the timeout or prints no valid credential is an error
 * naming the command, with the start of its stderr.
 */
int exec_credential_run(const kubeconfig_t *cfg, unsigned timeout_ms, exec_credential_t *out, char *err,
			size_t errlen);

void exec_credential_free(exec_credential_t *c);

#endif
