/*
 * Where the API server is and how to authenticate to it.
 *
 * Sources, in the order controller-runtime uses them:
 *   1. an explicit path (--kubeconfig);
 *   2. $KUBECONFIG, a colon-separated list of files merged the way kubectl
 *      merges them (the first file to define a cluster, user or context name
 *      wins; current-context comes from the first file that sets it);
 *   3. in-cluster: $KUBERNETES_SERVICE_HOST/PORT with the service-account
 *      token and CA under /var/run/secrets/kubernetes.io/serviceaccount;
 *   4. ~/.kube/config.
 *
 * Certificates given inline (*-data) are kept in memory as PEM bytes and
 * handed to curl as blobs; they are never written to a temporary file.
 * Relative file paths resolve against the folder of the kubeconfig that named
 * them (an exec plugin's command too, when it holds a '/'). A missing or malformed file, or a context/cluster/user that does not
 * exist, is an error whose one-line message names the file and the field.
 */
#ifndef DRASHIFT_KUBECONFIG_H
#define DRASHIFT_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *data; /* bytes, NUL-terminated for convenience; NULL when unset */
	size_t len;
} kubeconfig_blob_t;

/* users[].user.exec: a credential plugin (client.authentication.k8s.io ExecCredential). */
typedef struct {
	char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
	char *command;     /* absolute when the file gave a path; a bare name is looked up in PATH */
	char **args;       /* nargs strings */
	size_t nargs;
	char **env;        /* nenv "NAME=value" strings, added to drashift's environment */
	size_t nenv;
	bool provide_cluster_info; /* pass the cluster in KUBERNETES_EXEC_INFO */
	char *interactive_mode;    /* "Never" or "IfAvailable" (Always needs a terminal: refused) */
	char *install_hint;        /* shown when the command cannot be run, or NULL */
} kubeconfig_exec_t;

typedef struct {
	char *source;          /* file the context came from, or "in-cluster" */
	char *context;         /* context name, NULL in-cluster */
	char *server;          /* https://host:port, no trailing slash */
	char *tls_server_name; /* overrides the name checked in the server cert */
	bool insecure_skip_tls_verify;
	char *ca_file;          /* absolute path, or NULL */
	kubeconfig_blob_t ca;   /* certificate-authority-data, decoded */
	char *client_cert_file; /* absolute path, or NULL */
	kubeconfig_blob_t client_cert;
	char *client_key_file; /* absolute path, or NULL */
	kubeconfig_blob_t client_key;
	char *token;      /* bearer token given inline, or NULL */
	char *token_file; /* absolute path of a file holding the token; re-read on change */
	kubeconfig_exec_t *exec; /* a credential plugin, or NULL */
} kubeconfig_t;

/*
 * Load from the sources above. explicit_path may be NULL. context may be NULL
 * (use current-context). On error returns -1 and writes one line to err.
 */
int kubeconfig_load(const char *explicit_path, const char *context, kubeconfig_t *out,
		    char *err, size_t errlen);

/* Parse one kubeconfig file (or several, colon-separated, merged). */
int kubeconfig_load_files(const char *path_list, const char *context, kubeconfig_t *out,
			  char *err, size_t errlen);

/*
 * In-cluster config from $KUBERNETES_SERVICE_HOST/PORT and sa_dir (normally
 * /var/run/secrets/kubernetes.io/serviceaccount; tests pass their own).
 */
int kubeconfig_load_in_cluster(const char *sa_dir, kubeconfig_t *out, char *err, size_t errlen);

void kubeconfig_free(kubeconfig_t *cfg);

/*
 * Standard base64 with padding (whitespace ignored), as kubeconfig data and
 * Secret data are written, into a NUL-terminated blob. Empty input: unset.
 * Returns 0, or -1 (nothing allocated) on anything else.
 */
int kubeconfig_base64_decode(const char *in, kubeconfig_blob_t *out);

/* A deep copy of e (NULL gives NULL); free it with kubeconfig_exec_free. */
kubeconfig_exec_t *kubeconfig_exec_dup(const kubeconfig_exec_t *e);
void kubeconfig_exec_free(kubeconfig_exec_t *e);

#endif
