/*
 * kubeconfig loading.
 *
 * A file is parsed with libyaml into a document tree and kept alive while the
 * files of a list are merged: the merge only records, per cluster, user and
 * context name, which file's mapping defines it (the first one wins, as in
 * kubectl). Only the context that is finally chosen, and the cluster and user
 * it names, are read field by field. That keeps a kubeconfig usable when some
 * other user in it relies on something drashift does not support (an auth
 * provider, say), and it means every field error can name the
 * file that really defined the field.
 *
 * Every error is one line: "kubeconfig FILE: FIELD: problem". Names and values
 * taken from the file are quoted with control bytes escaped so that a hostile
 * or broken file cannot split the line.
 */
#include "kubeconfig.h"

#include "log.h"
#include "strmap.h"
#include "json_decode.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml.h>

/* Real kubeconfigs are kilobytes; anything this large is a mistake. */
#define KUBECONFIG_MAX_FILE_SIZE (16u * 1024u * 1024u)
/*
 * libyaml's scanner does work proportional to the flow nesting for every
 * token, and its loader looks anchors up one by one: nesting and anchors
 * without a bound make parsing quadratic (100,000 nested '[' took minutes).
 * A kubeconfig nests about eight deep and has no anchors, so these refuse
 * only files that are not kubeconfigs, before the quadratic work starts.
 */
#define KUBECONFIG_MAX_DEPTH 64
#define KUBECONFIG_MAX_ANCHORS 64
#define KUBECONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct {
	char *path; /* as the user spelled it: for messages and cfg->source */
	char *dir;  /* absolute folder of the file; relative paths resolve here */
	yaml_document_t doc;
	bool loaded; /* doc holds a parsed document that must be deleted */
} kubeconfig__file_t;

typedef struct {
	const char *name;  /* points into the defining file's document */
	char *label;       /* e.g. clusters["c"].cluster, prefix of field names */
	yaml_node_t *body; /* the cluster/user/context mapping; NULL when absent */
	kubeconfig__file_t *file;
} kubeconfig__entry_t;

typedef struct {
	kubeconfig__entry_t *items;
	size_t len;
	size_t cap;
	strmap_t by_name; /* name -> index + 1 into items */
} kubeconfig__list_t;

typedef struct {
	kubeconfig__file_t *files;
	size_t nfiles;
	kubeconfig__list_t clusters;
	kubeconfig__list_t users;
	kubeconfig__list_t contexts;
	const char *current_context; /* from the first file that sets one */
} kubeconfig__merged_t;

/* Where field lookups happen: one mapping of one file, for error messages. */
typedef struct {
	kubeconfig__file_t *file;
	const char *label; /* prefix of field names; NULL at the top level */
	yaml_node_t *map;  /* NULL: every field is absent */
	char *err;
	size_t errlen;
} kubeconfig__scope_t;

static int kubeconfig__field_fail(const kubeconfig__scope_t *s, const char *key, const char *fmt,
				  ...) __attribute__((format(printf, 3, 4)));

/* "kubeconfig FILE: LABEL.KEY: message", the shape of every field error. */
static int kubeconfig__field_fail(const kubeconfig__scope_t *s, const char *key, const char *fmt,
				  ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_decode_failf(s->err, s->errlen, "kubeconfig %s: %s%s%s: %s", s->file->path,
				s->label != NULL ? s->label : "", s->label != NULL ? "." : "", key,
				msg);
}

/*
 * A name or value from the file, in double quotes, with quotes, backslashes
 * and control bytes escaped: error messages must stay on one line whatever the
 * file contains.
 */
static char *kubeconfig__quote(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(n * 4 + 3);
	size_t o = 0;

	out[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(out + o, 5, "\\x%02x", (unsigned)*p);
			o += 4;
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/*
 * Lexical clean of an absolute path, like Go's filepath.Clean: drops empty
 * and "." segments and folds "..". kubectl joins relative paths the same way,
 * so both tools print the same path for the same file.
 */
static char *kubeconfig__clean(const char *abs)
{
	size_t n = strlen(abs);
	char *out = xmalloc(n + 2);
	size_t o = 0;
	const char *p = abs;

	while (*p != '\0') {
		while (*p == '/')
			p++;
		const char *seg = p;
		while (*p != '\0' && *p != '/')
			p++;
		size_t len = (size_t)(p - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, seg, len);
		o += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/*
 * Absolute, cleaned form of p. "~" and "~/..." expand from $HOME; other
 * relative paths resolve against dir, or the working directory when dir is
 * NULL. On error *why says what went wrong.
 */
static int kubeconfig__resolve(const char *dir, const char *p, char **out, const char **why)
{
	char *joined;

	*out = NULL;
	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		const char *home = getenv("HOME");
		if (home == NULL || home[0] != '/') {
			*why = "~ used but HOME is not set to an absolute path";
			return -1;
		}
		joined = xasprintf("%s/%s", home, p + 1);
	} else if (p[0] == '/') {
		joined = xstrdup(p);
	} else if (dir != NULL) {
		joined = xasprintf("%s/%s", dir, p);
	} else {
		char *cwd = getcwd(NULL, 0);
		if (cwd == NULL) {
			*why = strerror(errno);
			return -1;
		}
		joined = xasprintf("%s/%s", cwd, p);
		free(cwd);
	}
	*out = kubeconfig__clean(joined);
	free(joined);
	return 0;
}

/*
 * Reads a whole file, capped: a kubeconfig is small, and the cap turns a
 * wrong path (a disk image, /dev/zero) into an error instead of an OOM kill.
 * Returns 0 or -1 with errno set (EFBIG past the cap).
 */
static int kubeconfig__slurp(int fd, char **out, size_t *outlen)
{
	size_t cap = 4096;
	size_t len = 0;
	char *buf = xmalloc(cap);

	for (;;) {
		if (len == cap) {
			if (cap > KUBECONFIG_MAX_FILE_SIZE) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 <= KUBECONFIG_MAX_FILE_SIZE ? cap * 2
								   : KUBECONFIG_MAX_FILE_SIZE + 1;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;
			free(buf);
			errno = saved;
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* YAML's null: an explicit !!null tag, or a plain "", "~", "null". */
static bool kubeconfig__is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return false;
	if (n->tag != NULL && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
		return true;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *v = (const char *)n->data.scalar.value;
	return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	       strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

/* The value of key in a mapping; NULL when the key is absent or null. */
static yaml_node_t *kubeconfig__get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	size_t klen = strlen(key);
	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(doc, pair->key);
		if (k == NULL || k->type != YAML_SCALAR_NODE)
			continue;
		if (k->data.scalar.length != klen || memcmp(k->data.scalar.value, key, klen) != 0)
			continue;
		yaml_node_t *v = yaml_document_get_node(doc, pair->value);
		if (v == NULL || kubeconfig__is_null(v))
			return NULL;
		return v;
	}
	return NULL;
}

/*
 * A string field. An empty string counts as unset, as in kubectl where a
 * zero-length value means "not given". *out points into the document.
 */
static int kubeconfig__string(const kubeconfig__scope_t *s, const char *key, const char **out)
{
	*out = NULL;
	yaml_node_t *v = kubeconfig__get(&s->file->doc, s->map, key);
	if (v == NULL)
		return 0;
	if (v->type != YAML_SCALAR_NODE)
		return kubeconfig__field_fail(s, key, "expected a string");
	const char *value = (const char *)v->data.scalar.value;
	if (strlen(value) != v->data.scalar.length)
		return kubeconfig__field_fail(s, key, "contains a NUL byte");
	if (value[0] != '\0')
		*out = value;
	return 0;
}

/* A boolean field, YAML 1.1 spellings (true/yes/on, any case); unset is false. */
static int kubeconfig__bool(const kubeconfig__scope_t *s, const char *key, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	const char *v;

	*out = false;
	if (kubeconfig__string(s, key, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	char *q = kubeconfig__quote(v);
	kubeconfig__field_fail(s, key, "%s is not a boolean", q);
	free(q);
	return -1;
}

/* A file path field, made absolute against the folder of the defining file. */
static int kubeconfig__path(const kubeconfig__scope_t *s, const char *key, char **out)
{
	const char *v;
	const char *why = NULL;

	*out = NULL;
	if (kubeconfig__string(s, key, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (kubeconfig__resolve(s->file->dir, v, out, &why) != 0)
		return kubeconfig__field_fail(s, key, "%s", why);
	return 0;
}

static bool kubeconfig__is_base64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

/*
 * Standard base64 with padding, whitespace anywhere ignored (kubeconfigs are
 * often hand-wrapped). The alphabet and padding are checked here because
 * EVP_DecodeBlock is lenient: it reads '=' inside the data as zero bits and
 * always pads its output to a multiple of three bytes, so the padding count
 * is subtracted afterwards. Empty input decodes to an unset blob.
 */
int kubeconfig_base64_decode(const char *in, kubeconfig_blob_t *out)
{
	size_t n = strlen(in);
	char *packed = xmalloc(n + 1);
	size_t m = 0;

	out->data = NULL;
	out->len = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i] == ' ' || in[i] == '\t' || in[i] == '\r' || in[i] == '\n')
			continue;
		packed[m++] = in[i];
	}
	if (m == 0) {
		free(packed);
		return 0;
	}
	if (m % 4 != 0 || m > INT_MAX)
		goto bad;
	size_t pad = 0;
	if (packed[m - 1] == '=') {
		pad = 1;
		if (packed[m - 2] == '=')
			pad = 2;
	}
	for (size_t i = 0; i < m - pad; i++) {
		if (!kubeconfig__is_base64_char(packed[i]))
			goto bad;
	}
	unsigned char *buf = xmalloc(m / 4 * 3 + 1);
	int got = EVP_DecodeBlock(buf, (const unsigned char *)packed, (int)m);
	if (got < 0 || (size_t)got != m / 4 * 3) {
		free(buf);
		goto bad;
	}
	free(packed);
	out->len = (size_t)got - pad;
	buf[out->len] = '\0';
	out->data = (char *)buf;
	return 0;

bad:
	free(packed);
	return -1;
}

/* A *-data field: base64 in the file, raw bytes in the blob. */
static int kubeconfig__blob(const kubeconfig__scope_t *s, const char *key, kubeconfig_blob_t *out)
{
	const char *v;

	out->data = NULL;
	out->len = 0;
	if (kubeconfig__string(s, key, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (kubeconfig_base64_decode(v, out) != 0)
		return kubeconfig__field_fail(s, key, "invalid base64");
	return 0;
}

static kubeconfig__entry_t *kubeconfig__find(const kubeconfig__list_t *list, const char *name)
{
	uintptr_t i = (uintptr_t)strmap_get(&list->by_name, name);
	return i != 0 ? &list->items[i - 1] : NULL;
}

/*
 * Records the named entries of one list (clusters, users or contexts) of a
 * file. A name an earlier file already defined is skipped, which is kubectl's
 * "first file wins"; the same name twice in one file is an error, as it is in
 * kubectl. Field values are not read yet: see the comment at the top.
 */
static int kubeconfig__collect(kubeconfig__file_t *f, yaml_node_t *root, const char *kind,
			       const char *body_key, kubeconfig__list_t *list, char *err,
			       size_t errlen)
{
	yaml_node_t *seq = kubeconfig__get(&f->doc, root, kind);
	if (seq == NULL)
		return 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return json_decode_failf(err, errlen, "kubeconfig %s: %s: expected a list", f->path,
					kind);

	size_t index = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, index++) {
		yaml_node_t *item = yaml_document_get_node(&f->doc, *it);
		if (item == NULL || item->type != YAML_MAPPING_NODE)
			return json_decode_failf(err, errlen,
						"kubeconfig %s: %s[%zu]: expected a mapping",
						f->path, kind, index);

		char where[64];
		snprintf(where, sizeof(where), "%s[%zu]", kind, index);
		kubeconfig__scope_t s = { f, where, item, err, errlen };
		const char *name;
		if (kubeconfig__string(&s, "name", &name) != 0)
			return -1;
		if (name == NULL)
			return kubeconfig__field_fail(&s, "name", "missing");

		char *q = kubeconfig__quote(name);
		yaml_node_t *body = kubeconfig__get(&f->doc, item, body_key);
		if (body != NULL && body->type != YAML_MAPPING_NODE) {
			json_decode_failf(err, errlen,
					 "kubeconfig %s: %s[%s].%s: expected a mapping", f->path,
					 kind, q, body_key);
			free(q);
			return -1;
		}
		kubeconfig__entry_t *prev = kubeconfig__find(list, name);
		if (prev != NULL && prev->file == f) {
			json_decode_failf(err, errlen, "kubeconfig %s: %s[%s]: name defined twice",
					 f->path, kind, q);
			free(q);
			return -1;
		}
		if (prev != NULL) {
			free(q);
			continue;
		}
		if (list->len == list->cap) {
			list->cap = list->cap ? list->cap * 2 : 8;
			list->items = xrealloc(list->items, list->cap * sizeof(*list->items));
		}
		kubeconfig__entry_t *e = &list->items[list->len++];
		strmap_put(&list->by_name, name, (void *)(uintptr_t)list->len);
		e->name = name;
		e->label = xasprintf("%s[%s].%s", kind, q, body_key);
		e->body = body;
		e->file = f;
		free(q);
	}
	return 0;
}

static int kubeconfig__merge_file(kubeconfig__merged_t *m, kubeconfig__file_t *f, char *err,
				  size_t errlen)
{
	yaml_node_t *root = yaml_document_get_root_node(&f->doc);
	if (root == NULL || kubeconfig__is_null(root))
		return 0; /* an empty file is an empty config, as in kubectl */
	if (root->type != YAML_MAPPING_NODE)
		return json_decode_failf(err, errlen,
					"kubeconfig %s: expected a mapping at the top level",
					f->path);

	kubeconfig__scope_t top = { f, NULL, root, err, errlen };
	const char *current;
	if (kubeconfig__string(&top, "current-context", &current) != 0)
		return -1;
	if (m->current_context == NULL && current != NULL)
		m->current_context = current;

	if (kubeconfig__collect(f, root, "clusters", "cluster", &m->clusters, err, errlen) != 0 ||
	    kubeconfig__collect(f, root, "users", "user", &m->users, err, errlen) != 0 ||
	    kubeconfig__collect(f, root, "contexts", "context", &m->contexts, err, errlen) != 0)
		return -1;
	return 0;
}

/*
 * Walks the events of data once, stopping at the first collection nested
 * deeper than KUBECONFIG_MAX_DEPTH or anchor beyond KUBECONFIG_MAX_ANCHORS,
 * so that the load that follows does linear work. Syntax errors are left to
 * the load, which reports them with their line.
 */
static int kubeconfig__check_shape(const char *path, const char *data, size_t len, char *err,
				   size_t errlen)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return json_decode_failf(err, errlen, "kubeconfig %s: cannot initialize the parser",
					path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	int rc = 0;
	size_t depth = 0, anchors = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			break;
		yaml_event_type_t type = ev.type;
		bool anchored = (type == YAML_SCALAR_EVENT && ev.data.scalar.anchor != NULL) ||
				(type == YAML_SEQUENCE_START_EVENT && ev.data.sequence_start.anchor != NULL) ||
				(type == YAML_MAPPING_START_EVENT && ev.data.mapping_start.anchor != NULL);
		size_t line = ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if (anchored && ++anchors > KUBECONFIG_MAX_ANCHORS) {
			rc = json_decode_failf(err, errlen,
					      "kubeconfig %s: line %zu: more than %d anchors; a kubeconfig "
					      "needs none",
					      path, line, KUBECONFIG_MAX_ANCHORS);
			break;
		}
		if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
			if (++depth > KUBECONFIG_MAX_DEPTH) {
				rc = json_decode_failf(err, errlen,
						      "kubeconfig %s: line %zu: nested more than %d deep",
						      path, line, KUBECONFIG_MAX_DEPTH);
				break;
			}
		} else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (type == YAML_STREAM_END_EVENT) {
			break;
		}
	}
	yaml_parser_delete(&parser);
	return rc;
}

/*
 * Opens, reads and parses one file. Returns 0 when loaded, 1 when the file
 * does not exist (the caller decides whether that is an error), -1 on error.
 */
static int kubeconfig__read_file(kubeconfig__file_t *f, const char *path, char *err, size_t errlen)
{
	const char *why = NULL;
	char *abs;

	f->path = xstrdup(path);
	if (kubeconfig__resolve(NULL, path, &abs, &why) != 0)
		return json_decode_failf(err, errlen, "kubeconfig %s: %s", path, why);

	int fd = open(abs, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int saved = errno;
		free(abs);
		if (saved == ENOENT)
			return 1;
		return json_decode_failf(err, errlen, "kubeconfig %s: %s", path, strerror(saved));
	}
	char *data;
	size_t len;
	int rc = kubeconfig__slurp(fd, &data, &len);
	int saved = errno;
	close(fd);
	if (rc != 0) {
		free(abs);
		if (saved == EFBIG)
			return json_decode_failf(err, errlen, "kubeconfig %s: larger than %u MiB",
						path, KUBECONFIG_MAX_FILE_SIZE / (1024u * 1024u));
		return json_decode_failf(err, errlen, "kubeconfig %s: %s", path, strerror(saved));
	}

	/* abs is clean and absolute, so the last '/' ends its folder. */
	char *slash = strrchr(abs, '/');
	f->dir = xstrndup(abs, slash == abs ? 1 : (size_t)(slash - abs));
	free(abs);

	if (kubeconfig__check_shape(path, data, len, err, errlen) != 0) {
		free(data);
		return -1;
	}
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		free(data);
		return json_decode_failf(err, errlen, "kubeconfig %s: cannot initialize the parser",
					path);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &f->doc)) {
		const char *problem = parser.problem != NULL ? parser.problem : "invalid YAML";
		if (parser.error == YAML_READER_ERROR)
			json_decode_failf(err, errlen, "kubeconfig %s: byte %zu: %s", path,
					 parser.problem_offset, problem);
		else
			json_decode_failf(err, errlen, "kubeconfig %s: line %zu: %s", path,
					 parser.problem_mark.line + 1, problem);
		yaml_parser_delete(&parser);
		free(data);
		return -1;
	}
	yaml_parser_delete(&parser);
	free(data);
	f->loaded = true;
	return 0;
}

static void kubeconfig__merged_free(kubeconfig__merged_t *m)
{
	for (size_t i = 0; i < m->nfiles; i++) {
		if (m->files[i].loaded)
			yaml_document_delete(&m->files[i].doc);
		free(m->files[i].path);
		free(m->files[i].dir);
	}
	free(m->files);
	kubeconfig__list_t *lists[] = { &m->clusters, &m->users, &m->contexts };
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		for (size_t i = 0; i < lists[l]->len; i++)
			free(lists[l]->items[i].label);
		free(lists[l]->items);
		strmap_clear(&lists[l]->by_name, NULL);
	}
	memset(m, 0, sizeof(*m));
}

/*
 * Where the server is and how to trust it. A CA given both as a file and
 * inline, or together with insecure-skip-tls-verify, is rejected as kubectl
 * rejects it: the intent is ambiguous and guessing could skip verification.
 */
static int kubeconfig__build_cluster(const kubeconfig__entry_t *e, kubeconfig_t *cfg, char *err,
				     size_t errlen)
{
	kubeconfig__scope_t s = { e->file, e->label, e->body, err, errlen };
	const char *server;
	const char *tls_server_name;

	if (kubeconfig__string(&s, "server", &server) != 0)
		return -1;
	if (server == NULL)
		return kubeconfig__field_fail(&s, "server", "missing");
	size_t n = strlen(server);
	while (n > 0 && server[n - 1] == '/')
		n--;
	size_t scheme = 0;
	if (strncasecmp(server, "https://", 8) == 0)
		scheme = 8;
	else if (strncasecmp(server, "http://", 7) == 0)
		scheme = 7;
	if (scheme == 0 || n <= scheme) {
		char *q = kubeconfig__quote(server);
		kubeconfig__field_fail(&s, "server", "%s is not an https:// or http:// URL", q);
		free(q);
		return -1;
	}
	cfg->server = xstrndup(server, n);

	if (kubeconfig__string(&s, "tls-server-name", &tls_server_name) != 0)
		return -1;
	if (tls_server_name != NULL)
		cfg->tls_server_name = xstrdup(tls_server_name);
	if (kubeconfig__bool(&s, "insecure-skip-tls-verify", &cfg->insecure_skip_tls_verify) != 0 ||
	    kubeconfig__path(&s, "certificate-authority", &cfg->ca_file) != 0 ||
	    kubeconfig__blob(&s, "certificate-authority-data", &cfg->ca) != 0)
		return -1;
	if (cfg->ca_file != NULL && cfg->ca.data != NULL)
		return kubeconfig__field_fail(&s, "certificate-authority-data",
					      "conflicts with certificate-authority; set only one");
	if (cfg->insecure_skip_tls_verify && (cfg->ca_file != NULL || cfg->ca.data != NULL))
		return kubeconfig__field_fail(&s, "insecure-skip-tls-verify",
					      "cannot be combined with a certificate authority");
	return 0;
}

/* A list of strings (exec.args). */
static int kubeconfig__strings(const kubeconfig__scope_t *s, const char *key, char ***out, size_t *n)
{
	yaml_node_t *seq = kubeconfig__get(&s->file->doc, s->map, key);
	*out = NULL;
	*n = 0;
	if (seq == NULL)
		return 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return kubeconfig__field_fail(s, key, "expected a list of strings");
	size_t len = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	*out = xcalloc(len + 1, sizeof(**out));
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(&s->file->doc, *it);
		if (v == NULL || v->type != YAML_SCALAR_NODE ||
		    strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
			return kubeconfig__field_fail(s, key, "item %zu: expected a string", *n);
		(*out)[(*n)++] = xstrdup((const char *)v->data.scalar.value);
	}
	return 0;
}

/* exec.env: a list of {name, value}, kept as "NAME=value". */
static int kubeconfig__exec_env(const kubeconfig__scope_t *s, kubeconfig_exec_t *x)
{
	yaml_node_t *seq = kubeconfig__get(&s->file->doc, s->map, "env");
	if (seq == NULL)
		return 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return kubeconfig__field_fail(s, "env", "expected a list of {name, value}");
	size_t len = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	x->env = xcalloc(len + 1, sizeof(*x->env));
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		char *where = xasprintf("%s.env[%zu]", s->label, x->nenv);
		kubeconfig__scope_t item = { s->file, where, yaml_document_get_node(&s->file->doc, *it), s->err,
					     s->errlen };
		const char *name = NULL, *value = NULL;
		int rc = 0;
		if (item.map == NULL || item.map->type != YAML_MAPPING_NODE)
			rc = kubeconfig__field_fail(s, "env", "item %zu: expected a mapping", x->nenv);
		else if (kubeconfig__string(&item, "name", &name) != 0 ||
			 kubeconfig__string(&item, "value", &value) != 0)
			rc = -1;
		else if (name == NULL || strchr(name, '=') != NULL)
			rc = kubeconfig__field_fail(&item, "name", name == NULL ? "missing" : "contains '='");
		free(where);
		if (rc != 0)
			return -1;
		x->env[x->nenv++] = xasprintf("%s=%s", name, value != NULL ? value : "");
	}
	return 0;
}

static int kubeconfig__exec_fields(const kubeconfig__scope_t *scope, kubeconfig_exec_t *x);

/*
 * users[].user.exec, checked as client-go's clientcmd checks it: apiVersion
 * and command are required, and so is interactiveMode for v1 (v1beta1
 * defaults to IfAvailable). drashift has no terminal, so Always, which needs
 * one, is refused here rather than at the first request.
 */
static int kubeconfig__build_exec(const kubeconfig__scope_t *user, yaml_node_t *map, kubeconfig_t *cfg)
{
	if (map->type != YAML_MAPPING_NODE)
		return kubeconfig__field_fail(user, "exec", "expected a mapping");
	char *label = xasprintf("%s.exec", user->label);
	kubeconfig__scope_t s = { user->file, label, map, user->err, user->errlen };
	cfg->exec = xcalloc(1, sizeof(*cfg->exec));
	int rc = kubeconfig__exec_fields(&s, cfg->exec);
	free(label);
	return rc;
}

static int kubeconfig__exec_fields(const kubeconfig__scope_t *scope, kubeconfig_exec_t *x)
{
	const kubeconfig__scope_t s = *scope;
	const char *api_version, *command, *mode, *hint;
	if (kubeconfig__string(&s, "apiVersion", &api_version) != 0 ||
	    kubeconfig__string(&s, "command", &command) != 0 ||
	    kubeconfig__string(&s, "interactiveMode", &mode) != 0 ||
	    kubeconfig__string(&s, "installHint", &hint) != 0 ||
	    kubeconfig__bool(&s, "provideClusterInfo", &x->provide_cluster_info) != 0 ||
	    kubeconfig__strings(&s, "args", &x->args, &x->nargs) != 0 || kubeconfig__exec_env(&s, x) != 0)
		return -1;
	if (api_version == NULL)
		return kubeconfig__field_fail(&s, "apiVersion", "missing");
	bool v1 = strcmp(api_version, "client.authentication.k8s.io/v1") == 0;
	if (!v1 && strcmp(api_version, "client.authentication.k8s.io/v1beta1") != 0) {
		char *q = kubeconfig__quote(api_version);
		kubeconfig__field_fail(&s, "apiVersion",
				       "%s is not client.authentication.k8s.io/v1 or /v1beta1", q);
		free(q);
		return -1;
	}
	x->api_version = xstrdup(api_version);
	if (command == NULL)
		return kubeconfig__field_fail(&s, "command", "missing");
	if (strchr(command, '/') != NULL) {
		if (kubeconfig__path(&s, "command", &x->command) != 0)
			return -1;
	} else {
		x->command = xstrdup(command);
	}
	if (mode == NULL && v1)
		return kubeconfig__field_fail(&s, "interactiveMode", "missing; use Never or IfAvailable");
	if (mode == NULL || strcmp(mode, "IfAvailable") == 0 || strcmp(mode, "Never") == 0) {
		x->interactive_mode = xstrdup(mode != NULL ? mode : "IfAvailable");
	} else if (strcmp(mode, "Always") == 0) {
		return kubeconfig__field_fail(&s, "interactiveMode",
					      "Always needs a terminal and drashift runs without one; use "
					      "Never or IfAvailable");
	} else {
		char *q = kubeconfig__quote(mode);
		kubeconfig__field_fail(&s, "interactiveMode", "%s is not Never, IfAvailable or Always", q);
		free(q);
		return -1;
	}
	if (hint != NULL)
		x->install_hint = xstrdup(hint);
	return 0;
}

/*
 * How to authenticate. Auth providers and basic auth would each need code
 * drashift does not have; ignoring them would silently send anonymous
 * requests, so they are errors that name the field.
 */
static int kubeconfig__build_user(const kubeconfig__entry_t *e, kubeconfig_t *cfg, char *err,
				  size_t errlen)
{
	static const struct {
		const char *key;
		const char *why;
	} unsupported[] = {
		{ "auth-provider", "auth providers are not supported" },
		{ "username", "basic authentication is not supported" },
		{ "password", "basic authentication is not supported" },
	};
	kubeconfig__scope_t s = { e->file, e->label, e->body, err, errlen };
	const char *token;

	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (kubeconfig__get(&e->file->doc, e->body, unsupported[i].key) != NULL)
			return kubeconfig__field_fail(
				&s, unsupported[i].key,
				"%s; use token, tokenFile, a client certificate or an exec plugin",
				unsupported[i].why);
	}

	if (kubeconfig__string(&s, "token", &token) != 0)
		return -1;
	if (token != NULL)
		cfg->token = xstrdup(token);
	if (kubeconfig__path(&s, "tokenFile", &cfg->token_file) != 0 ||
	    kubeconfig__path(&s, "client-certificate", &cfg->client_cert_file) != 0 ||
	    kubeconfig__blob(&s, "client-certificate-data", &cfg->client_cert) != 0 ||
	    kubeconfig__path(&s, "client-key", &cfg->client_key_file) != 0 ||
	    kubeconfig__blob(&s, "client-key-data", &cfg->client_key) != 0)
		return -1;

	bool has_cert = cfg->client_cert_file != NULL || cfg->client_cert.data != NULL;
	bool has_key = cfg->client_key_file != NULL || cfg->client_key.data != NULL;
	yaml_node_t *exec = kubeconfig__get(&e->file->doc, e->body, "exec");
	if (exec != NULL) {
		if (kubeconfig__build_exec(&s, exec, cfg) != 0)
			return -1;
		/* Two sources of credentials: which one wins would be a guess. */
		if (cfg->token != NULL || cfg->token_file != NULL || has_cert)
			return kubeconfig__field_fail(&s, "exec",
						      "cannot be combined with token, tokenFile or a client "
						      "certificate; set only one");
	}
	if (cfg->client_cert_file != NULL && cfg->client_cert.data != NULL)
		return kubeconfig__field_fail(&s, "client-certificate-data",
					      "conflicts with client-certificate; set only one");
	if (cfg->client_key_file != NULL && cfg->client_key.data != NULL)
		return kubeconfig__field_fail(&s, "client-key-data",
					      "conflicts with client-key; set only one");
	if (has_cert && !has_key)
		return kubeconfig__field_fail(&s, "client-key",
					      "missing; a client certificate needs its key");
	if (has_key && !has_cert)
		return kubeconfig__field_fail(&s, "client-certificate",
					      "missing; a client key needs its certificate");
	return 0;
}

/*
 * Picks the context (the caller's, else current-context) and fills cfg from
 * it and the cluster and user it names. label names the loaded files for
 * errors that belong to no single file. On error cfg may hold partial state
 * for the caller to free.
 */
static int kubeconfig__build(const kubeconfig__merged_t *m, const char *label, const char *context,
			     kubeconfig_t *cfg, char *err, size_t errlen)
{
	const char *name = context != NULL && context[0] != '\0' ? context : m->current_context;
	if (name == NULL)
		return json_decode_failf(err, errlen,
					"kubeconfig %s: current-context is empty and no context "
					"was given",
					label);

	kubeconfig__entry_t *ctx = kubeconfig__find(&m->contexts, name);
	if (ctx == NULL) {
		char *q = kubeconfig__quote(name);
		json_decode_failf(err, errlen, "kubeconfig %s: context %s not found", label, q);
		free(q);
		return -1;
	}

	kubeconfig__scope_t s = { ctx->file, ctx->label, ctx->body, err, errlen };
	const char *cluster_name;
	const char *user_name;
	const char *ns;
	if (kubeconfig__string(&s, "cluster", &cluster_name) != 0 ||
	    kubeconfig__string(&s, "user", &user_name) != 0 ||
	    kubeconfig__string(&s, "namespace", &ns) != 0)
		return -1;
	(void)ns; /* checked for shape only: drashift watches its own namespace */
	if (cluster_name == NULL)
		return kubeconfig__field_fail(&s, "cluster", "missing");

	kubeconfig__entry_t *cluster = kubeconfig__find(&m->clusters, cluster_name);
	if (cluster == NULL) {
		char *q = kubeconfig__quote(cluster_name);
		kubeconfig__field_fail(&s, "cluster", "cluster %s not found", q);
		free(q);
		return -1;
	}
	/* No user is allowed, as in kubectl: requests are then anonymous. */
	kubeconfig__entry_t *user = NULL;
	if (user_name != NULL) {
		user = kubeconfig__find(&m->users, user_name);
		if (user == NULL) {
			char *q = kubeconfig__quote(user_name);
			kubeconfig__field_fail(&s, "user", "user %s not found", q);
			free(q);
			return -1;
		}
	}

	cfg->source = xstrdup(ctx->file->path);
	cfg->context = xstrdup(name);
	if (kubeconfig__build_cluster(cluster, cfg, err, errlen) != 0)
		return -1;
	if (user != NULL && kubeconfig__build_user(user, cfg, err, errlen) != 0)
		return -1;
	return 0;
}

/* Joins strings with ':' (the loaded files, for messages about all of them). */
static char *kubeconfig__join(char *const *parts, size_t n)
{
	size_t total = 1;
	for (size_t i = 0; i < n; i++)
		total += strlen(parts[i]) + 1;
	char *out = xmalloc(total);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(parts[i]);
		if (i > 0)
			out[o++] = ':';
		memcpy(out + o, parts[i], len);
		o += len;
	}
	out[o] = '\0';
	return out;
}

/*
 * Loads and merges paths[0..n). Missing files are skipped, as kubectl skips
 * them in $KUBECONFIG, but at least one must exist; any other problem with
 * any file is an error.
 */
static int kubeconfig__load_paths(char *const *paths, size_t n, const char *context,
				  kubeconfig_t *out, char *err, size_t errlen)
{
	kubeconfig__merged_t m = { 0 };
	kubeconfig_t cfg = { 0 };
	char **loaded = xcalloc(n, sizeof(*loaded));
	size_t nloaded = 0;
	char *label = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	m.files = xcalloc(n, sizeof(*m.files));
	m.nfiles = n;
	for (size_t i = 0; i < n; i++) {
		int r = kubeconfig__read_file(&m.files[i], paths[i], err, errlen);
		if (r < 0)
			goto done;
		if (r > 0) {
			log_debug("kubeconfig file does not exist, skipped", "path", paths[i]);
			continue;
		}
		loaded[nloaded++] = m.files[i].path;
		if (kubeconfig__merge_file(&m, &m.files[i], err, errlen) != 0)
			goto done;
	}
	if (nloaded == 0) {
		if (n == 1) {
			json_decode_failf(err, errlen, "kubeconfig %s: %s", paths[0],
					 strerror(ENOENT));
		} else {
			label = kubeconfig__join(paths, n);
			json_decode_failf(err, errlen,
					 "kubeconfig %s: none of the listed files exists", label);
		}
		goto done;
	}
	label = kubeconfig__join(loaded, nloaded);
	if (kubeconfig__build(&m, label, context, &cfg, err, errlen) != 0)
		goto done;
	*out = cfg;
	memset(&cfg, 0, sizeof(cfg));
	rc = 0;

done:
	kubeconfig_free(&cfg);
	kubeconfig__merged_free(&m);
	free(loaded);
	free(label);
	return rc;
}

int kubeconfig_load_files(const char *path_list, const char *context, kubeconfig_t *out,
			  char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (path_list == NULL)
		return json_decode_failf(err, errlen, "kubeconfig: no file given");

	/* Empty elements ("a::b", a trailing ':') are skipped, as kubectl does. */
	size_t n = 0;
	char **paths = xcalloc(strlen(path_list) / 2 + 1, sizeof(*paths));
	for (const char *p = path_list;;) {
		const char *end = strchr(p, ':');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > 0)
			paths[n++] = xstrndup(p, len);
		if (end == NULL)
			break;
		p = end + 1;
	}

	int rc;
	if (n == 0) {
		char *q = kubeconfig__quote(path_list);
		rc = json_decode_failf(err, errlen, "kubeconfig: the path list %s names no file", q);
		free(q);
	} else {
		rc = kubeconfig__load_paths(paths, n, context, out, err, errlen);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

/* The in-cluster files must be there when we start: checked once, up front. */
static int kubeconfig__check_readable(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return json_decode_failf(err, errlen, "kubeconfig in-cluster: %s: %s", path,
					strerror(errno));
	struct stat st;
	int rc = fstat(fd, &st);
	int saved = errno;
	close(fd);
	if (rc != 0)
		return json_decode_failf(err, errlen, "kubeconfig in-cluster: %s: %s", path,
					strerror(saved));
	if (!S_ISREG(st.st_mode))
		return json_decode_failf(err, errlen,
					"kubeconfig in-cluster: %s: not a regular file", path);
	return 0;
}

/*
 * The token is not read here: kubelet rotates the projected token, so the
 * HTTP layer re-reads token_file, as client-go does.
 */
int kubeconfig_load_in_cluster(const char *sa_dir, kubeconfig_t *out, char *err, size_t errlen)
{
	kubeconfig_t cfg = { 0 };
	const char *why = NULL;
	char *dir = NULL;

	memset(out, 0, sizeof(*out));
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
		return json_decode_failf(err, errlen,
					"kubeconfig in-cluster: KUBERNETES_SERVICE_HOST and "
					"KUBERNETES_SERVICE_PORT must be set");
	char *end = NULL;
	errno = 0;
	long portnum = strtol(port, &end, 10);
	if (errno != 0 || end == port || *end != '\0' || port[0] == '+' || port[0] == '-' ||
	    portnum < 1 || portnum > 65535) {
		char *q = kubeconfig__quote(port);
		json_decode_failf(err, errlen,
				 "kubeconfig in-cluster: KUBERNETES_SERVICE_PORT: %s is not a port",
				 q);
		free(q);
		return -1;
	}
	if (strpbrk(host, "/ \t\r\n[]@?#") != NULL) {
		char *q = kubeconfig__quote(host);
		json_decode_failf(err, errlen,
				 "kubeconfig in-cluster: KUBERNETES_SERVICE_HOST: %s is not a host",
				 q);
		free(q);
		return -1;
	}
	if (kubeconfig__resolve(NULL, sa_dir, &dir, &why) != 0)
		return json_decode_failf(err, errlen, "kubeconfig in-cluster: %s: %s", sa_dir, why);

	/* An IPv6 literal needs brackets in a URL. */
	bool ipv6 = strchr(host, ':') != NULL;
	cfg.server = xasprintf("https://%s%s%s:%ld", ipv6 ? "[" : "", host, ipv6 ? "]" : "",
			       portnum);
	cfg.source = xstrdup("in-cluster");
	cfg.token_file = xasprintf("%s/token", strcmp(dir, "/") == 0 ? "" : dir);
	cfg.ca_file = xasprintf("%s/ca.crt", strcmp(dir, "/") == 0 ? "" : dir);
	free(dir);
	if (kubeconfig__check_readable(cfg.token_file, err, errlen) != 0 ||
	    kubeconfig__check_readable(cfg.ca_file, err, errlen) != 0) {
		kubeconfig_free(&cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

/*
 * controller-runtime's order: --kubeconfig, $KUBECONFIG, in-cluster,
 * ~/.kube/config. An empty explicit path counts as not given, as an empty
 * --kubeconfig does in kubectl.
 */
int kubeconfig_load(const char *explicit_path, const char *context, kubeconfig_t *out,
		    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (explicit_path != NULL && explicit_path[0] != '\0') {
		/* One file, never split at ':'. */
		char *paths[1] = { (char *)explicit_path };
		return kubeconfig__load_paths(paths, 1, context, out, err, errlen);
	}

	const char *list = getenv("KUBECONFIG");
	if (list != NULL && list[0] != '\0')
		return kubeconfig_load_files(list, context, out, err, errlen);

	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (host != NULL && host[0] != '\0' && port != NULL && port[0] != '\0')
		return kubeconfig_load_in_cluster(KUBECONFIG_SA_DIR, out, err, errlen);

	const char *home = getenv("HOME");
	if (home != NULL && home[0] != '\0') {
		char *path = xasprintf("%s/.kube/config", home);
		struct stat st;
		if (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) {
			char *paths[1] = { path };
			int rc = kubeconfig__load_paths(paths, 1, context, out, err, errlen);
			free(path);
			return rc;
		}
		free(path);
	}
	return json_decode_failf(err, errlen,
				"no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a "
				"cluster");
}

/* Secrets are wiped before their memory goes back to the allocator. */
void kubeconfig_free(kubeconfig_t *cfg)
{
	if (cfg == NULL)
		return;
	if (cfg->token != NULL)
		OPENSSL_cleanse(cfg->token, strlen(cfg->token));
	if (cfg->client_key.data != NULL)
		OPENSSL_cleanse(cfg->client_key.data, cfg->client_key.len);
	free(cfg->source);
	free(cfg->context);
	free(cfg->server);
	free(cfg->tls_server_name);
	free(cfg->ca_file);
	free(cfg->ca.data);
	free(cfg->client_cert_file);
	free(cfg->client_cert.data);
	free(cfg->client_key_file);
	free(cfg->client_key.data);
	free(cfg->token);
	free(cfg->token_file);
	kubeconfig_exec_free(cfg->exec);
	memset(cfg, 0, sizeof(*cfg));
}

static char **kubeconfig__dup_strings(char *const *v, size_t n)
{
	char **out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

static char *kubeconfig__dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

kubeconfig_exec_t *kubeconfig_exec_dup(const kubeconfig_exec_t *e)
{
	if (e == NULL)
		return NULL;
	kubeconfig_exec_t *x = xcalloc(1, sizeof(*x));
	x->api_version = kubeconfig__dup_or_null(e->api_version);
	x->command = kubeconfig__dup_or_null(e->command);
	x->args = kubeconfig__dup_strings(e->args, e->nargs);
	x->nargs = e->nargs;
	x->env = kubeconfig__dup_strings(e->env, e->nenv);
	x->nenv = e->nenv;
	x->provide_cluster_info = e->provide_cluster_info;
	x->interactive_mode = kubeconfig__dup_or_null(e->interactive_mode);
	x->install_hint = kubeconfig__dup_or_null(e->install_hint);
	return x;
}

void kubeconfig_exec_free(kubeconfig_exec_t *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; e->args != NULL && e->args[i] != NULL; i++)
		free(e->args[i]);
	for (size_t i = 0; e->env != NULL && e->env[i] != NULL; i++) {
		OPENSSL_cleanse(e->env[i], strlen(e->env[i])); /* env values may be secrets */
		free(e->env[i]);
	}
	free(e->args);
	free(e->env);
	free(e->api_version);
	free(e->command);
	free(e->interactive_mode);
	free(e->install_hint);
	free(e);
}
