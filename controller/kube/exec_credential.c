#include "exec_credential.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "buf.h"
#include "rfc3339.h"
#include "json_decode.h"
#include "xalloc.h"

extern char **environ;

/* An ExecCredential is a few kilobytes; a certificate chain fits well within this. */
#define EXEC_CREDENTIAL_MAX_STDOUT (1024u * 1024u)
/* Enough of stderr to say what went wrong; the rest is read and dropped. */
#define EXEC_CREDENTIAL_MAX_STDERR 1024u
#define EXEC_CREDENTIAL_MAX_CA (1024u * 1024u)

void exec_credential_free(exec_credential_t *c)
{
	if (c == NULL)
		return;
	if (c->token != NULL)
		OPENSSL_cleanse(c->token, strlen(c->token));
	if (c->key.data != NULL)
		OPENSSL_cleanse(c->key.data, c->key.len);
	free(c->token);
	free(c->cert.data);
	free(c->key.data);
	memset(c, 0, sizeof(*c));
}

/* A message on one line: control bytes become spaces, trailing space trimmed. */
static void exec_credential_one_line(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
}

static const char *exec_credential_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

static kubeconfig_blob_t exec_credential_blob(const char *s)
{
	kubeconfig_blob_t b = { 0 };
	if (s != NULL) {
		b.len = strlen(s);
		b.data = xstrdup(s);
	}
	return b;
}

int exec_credential_decode(const char *json, size_t len, const char *api_version, exec_credential_t *out,
			   char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	cJSON *o = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return json_decode_failf(err, errlen, "stdout is not an ExecCredential JSON object");
	}
	int rc = -1;
	const char *kind = exec_credential_string(o, "kind");
	const char *version = exec_credential_string(o, "apiVersion");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
	const char *token = exec_credential_string(status, "token");
	const char *cert = exec_credential_string(status, "clientCertificateData");
	const char *key = exec_credential_string(status, "clientKeyData");
	const cJSON *expiry = cJSON_GetObjectItemCaseSensitive(status, "expirationTimestamp");
	int64_t expiry_us = 0;
	if (kind == NULL || strcmp(kind, "ExecCredential") != 0)
		json_decode_failf(err, errlen, "stdout: kind is not ExecCredential");
	else if (version == NULL || strcmp(version, api_version) != 0)
		json_decode_failf(err, errlen, "stdout: apiVersion %.64s%s, the kubeconfig asks for %s",
				     version ? "is " : "is missing", version ? version : "", api_version);
	else if (!cJSON_IsObject(status))
		json_decode_failf(err, errlen, "stdout: no status");
	else if (token == NULL && cert == NULL && key == NULL)
		json_decode_failf(err, errlen, "stdout: status has no token and no client certificate");
	else if ((cert == NULL) != (key == NULL))
		json_decode_failf(err, errlen, "stdout: status has a client %s without its %s",
				     cert ? "certificate" : "key", cert ? "key" : "certificate");
	else if (expiry != NULL && !cJSON_IsNull(expiry) &&
		 (!cJSON_IsString(expiry) || rfc3339_parse(expiry->valuestring, &expiry_us) != 0))
		json_decode_failf(err, errlen, "stdout: status.expirationTimestamp is not an RFC 3339 time");
	else
		rc = 0;
	if (rc != 0 && err != NULL && errlen > 0)
		exec_credential_one_line(err); /* the plugin's apiVersion may hold anything */
	if (rc == 0) {
		out->token = token ? xstrdup(token) : NULL;
		out->cert = exec_credential_blob(cert);
		out->key = exec_credential_blob(key);
		out->expiry_us = expiry_us;
	}
	if (token != NULL)
		OPENSSL_cleanse((char *)token, strlen(token));
	if (key != NULL)
		OPENSSL_cleanse((char *)key, strlen(key));
	cJSON_Delete(o);
	return rc;
}

/* The CA the plugin is told about: inline data, or the file's bytes. */
static char *exec_credential_ca_base64(const kubeconfig_t *cfg)
{
	kubeconfig_blob_t ca = cfg->ca;
	char *file = NULL;
	if (ca.data == NULL && cfg->ca_file != NULL) {
		FILE *f = fopen(cfg->ca_file, "rb");
		if (f == NULL)
			return NULL;
		file = xmalloc(EXEC_CREDENTIAL_MAX_CA);
		ca.len = fread(file, 1, EXEC_CREDENTIAL_MAX_CA, f);
		ca.data = file;
		fclose(f);
	}
	if (ca.data == NULL || ca.len == 0) {
		free(file);
		return NULL;
	}
	char *b64 = xmalloc(4 * ((ca.len + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ca.data, (int)ca.len);
	free(file);
	return b64;
}

char *exec_credential_info(const kubeconfig_t *cfg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "ExecCredential");
	cJSON_AddStringToObject(o, "apiVersion", cfg->exec->api_version);
	cJSON *spec = cJSON_AddObjectToObject(o, "spec");
	cJSON_AddBoolToObject(spec, "interactive", false);
	if (cfg->exec->provide_cluster_info) {
		cJSON *c = cJSON_AddObjectToObject(spec, "cluster");
		cJSON_AddStringToObject(c, "server", cfg->server);
		if (cfg->tls_server_name != NULL)
			cJSON_AddStringToObject(c, "tls-server-name", cfg->tls_server_name);
		if (cfg->insecure_skip_tls_verify)
			cJSON_AddBoolToObject(c, "insecure-skip-tls-verify", true);
		char *ca = exec_credential_ca_base64(cfg);
		if (ca != NULL)
			cJSON_AddStringToObject(c, "certificate-authority-data", ca);
		free(ca);
	}
	char *printed = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (printed == NULL)
		abort();
	char *copy = xstrdup(printed);
	cJSON_free(printed);
	return copy;
}

static bool exec_credential_env_overridden(const char *entry, char *const *env, size_t n)
{
	const char *eq = strchr(entry, '=');
	size_t name_len = eq ? (size_t)(eq - entry) : strlen(entry);
	if (name_len == strlen("KUBERNETES_EXEC_INFO") && memcmp(entry, "KUBERNETES_EXEC_INFO", name_len) == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], entry, name_len) == 0 && env[i][name_len] == '=')
			return true;
	return false;
}

/* drashift's environment, then the kubeconfig's env (which wins), then KUBERNETES_EXEC_INFO. */
static char **exec_credential_envp(const kubeconfig_t *cfg, char *info_entry)
{
	size_t n = 0;
	while (environ[n] != NULL)
		n++;
	char **envp = xcalloc(n + cfg->exec->nenv + 2, sizeof(*envp));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!exec_credential_env_overridden(environ[i], cfg->exec->env, cfg->exec->nenv))
			envp[k++] = environ[i];
	for (size_t i = 0; i < cfg->exec->nenv; i++)
		envp[k++] = cfg->exec->env[i];
	envp[k++] = info_entry;
	envp[k] = NULL;
	return envp;
}


/*
 * The program to run: a command with a '/' as it is, a bare name searched in
 * $PATH. Done here rather than by posix_spawnp so that a missing plugin is
 * always "No such file or directory" (glibc may report a failed exec as the
 * child's exit status 127 instead). NULL with errno set when there is none.
 */
static char *exec_credential_lookup(const char *command)
{
	if (strchr(command, '/') != NULL) {
		if (access(command, X_OK) != 0)
			return NULL;
		return xstrdup(command);
	}
	const char *path = getenv("PATH");
	if (path == NULL || path[0] == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	int saved = ENOENT;
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *candidate = len ? xasprintf("%.*s/%s", (int)len, p, command) : xasprintf("./%s", command);
		struct stat st;
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(candidate, X_OK) == 0)
				return candidate;
			saved = EACCES;
		}
		free(candidate);
		if (end == NULL)
			break;
		p = end + 1;
	}
	errno = saved;
	return NULL;
}

static uint64_t exec_credential_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Read stdout (up to its cap) and stderr (its start) until both close or the
 * deadline passes. Returns 0, or -1 with *why set.
 */
static int exec_credential_collect(int out_fd, int err_fd, uint64_t deadline, buf_t *out, char *errbuf,
				   size_t *errlen, const char **why)
{
	struct pollfd fds[2] = { { .fd = out_fd, .events = POLLIN }, { .fd = err_fd, .events = POLLIN } };
	char chunk[4096];
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		uint64_t now = exec_credential_now_ms();
		if (now >= deadline) {
			*why = "timed out";
			return -1;
		}
		int ready = poll(fds, 2, (int)(deadline - now));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0) {
			*why = "cannot read its output";
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || fds[i].revents == 0)
				continue;
			ssize_t r = read(fds[i].fd, chunk, sizeof(chunk));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				fds[i].fd = -1;
				continue;
			}
			if (i == 0 && buf_append(out, chunk, (size_t)r) != 0) {
				*why = "printed more than 1 MiB";
				return -1;
			}
			if (i == 1 && *errlen < EXEC_CREDENTIAL_MAX_STDERR) {
				size_t take = (size_t)r;
				if (take > EXEC_CREDENTIAL_MAX_STDERR - *errlen)
					take = EXEC_CREDENTIAL_MAX_STDERR - *errlen;
				memcpy(errbuf + *errlen, chunk, take);
				*errlen += take;
			}
		}
	}
	return 0;
}

int exec_credential_run(const kubeconfig_t *cfg, unsigned timeout_ms, exec_credential_t *out, char *err,
			size_t errlen)
{
	const kubeconfig_exec_t *x = cfg->exec;
	memset(out, 0, sizeof(*out));
	char *program = exec_credential_lookup(x->command);
	if (program == NULL)
		return json_decode_failf(err, errlen, "exec plugin %s: cannot run: %s%s%s", x->command,
					    strerror(errno), x->install_hint ? "; " : "",
					    x->install_hint ? x->install_hint : "");
	int out_pipe[2], err_pipe[2];
	if (pipe2(out_pipe, O_CLOEXEC) != 0) {
		free(program);
		return json_decode_failf(err, errlen, "exec plugin %s: %s", x->command, strerror(errno));
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		free(program);
		close(out_pipe[0]);
		close(out_pipe[1]);
		return json_decode_failf(err, errlen, "exec plugin %s: %s", x->command, strerror(errno));
	}
	char **argv = xcalloc(x->nargs + 2, sizeof(*argv));
	argv[0] = x->command;
	for (size_t i = 0; i < x->nargs; i++)
		argv[i + 1] = x->args[i];
	char *info = exec_credential_info(cfg);
	char *info_entry = xasprintf("KUBERNETES_EXEC_INFO=%s", info);
	free(info);
	char **envp = exec_credential_envp(cfg, info_entry);

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	pid_t pid;
	int spawn_rc = posix_spawn(&pid, program, &fa, &attr, argv, envp);
	free(program);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(argv);
	free(envp);
	OPENSSL_cleanse(info_entry, strlen(info_entry));
	free(info_entry);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (spawn_rc != 0) {
		close(out_pipe[0]);
		close(err_pipe[0]);
		return json_decode_failf(err, errlen, "exec plugin %s: cannot run: %s%s%s", x->command,
					    strerror(spawn_rc), x->install_hint ? "; " : "",
					    x->install_hint ? x->install_hint : "");
	}

	buf_t stdout_buf;
	buf_init(&stdout_buf, EXEC_CREDENTIAL_MAX_STDOUT);
	char stderr_buf[EXEC_CREDENTIAL_MAX_STDERR + 1];
	size_t stderr_len = 0;
	const char *why = NULL;
	int rc = exec_credential_collect(out_pipe[0], err_pipe[0], exec_credential_now_ms() + timeout_ms,
					 &stdout_buf, stderr_buf, &stderr_len, &why);
	close(out_pipe[0]);
	close(err_pipe[0]);
	if (rc != 0)
		kill(-pid, SIGKILL); /* its own process group: children holding the pipes go too */
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	stderr_buf[stderr_len] = '\0';
	exec_credential_one_line(stderr_buf);
	char detail[64] = "";
	if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		snprintf(detail, sizeof(detail), "exit status %d", WEXITSTATUS(status));
	else if (rc == 0 && WIFSIGNALED(status))
		snprintf(detail, sizeof(detail), "killed by signal %d", WTERMSIG(status));
	if (rc != 0 || detail[0] != '\0') {
		json_decode_failf(err, errlen, "exec plugin %s: %s%s%s", x->command, why ? why : detail,
				     stderr_buf[0] ? ": " : "", stderr_buf);
		rc = -1;
	} else {
		char why_decode[256];
		rc = exec_credential_decode(stdout_buf.data ? stdout_buf.data : "", stdout_buf.len, x->api_version,
					    out, why_decode, sizeof(why_decode));
		if (rc != 0)
			json_decode_failf(err, errlen, "exec plugin %s: %s", x->command, why_decode);
	}
	if (stdout_buf.data != NULL)
		OPENSSL_cleanse(stdout_buf.data, stdout_buf.len);
	buf_free(&stdout_buf);
	return rc;
}
