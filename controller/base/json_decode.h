/*
 * Reading untrusted JSON member by member, with errors that name the field.
 *
 * One module, because every decoder of untrusted bytes (the API's objects in
 * projection.c, MigrationPlans in reconcilers/plan.c) reports errors the same
 * way: it returns -1 and writes one line "PATH.KEY: problem", where PATH is
 * where the member sits from the top of the document, for example
 *   status.allocation.devices.results[2].driver: not a string
 * Keys and values taken from the document are quoted with control bytes
 * escaped and cut after JSON_DECODE_QUOTE_MAX bytes, so an error stays one log
 * line whatever the peer sent. Operators, logs and tests read these lines; they
 * must not depend on which decoder wrote them.
 *
 * Every read goes through a scope: the JSON object being read plus its path.
 * A reader checks the JSON type and, when it is wrong, writes the error and
 * returns -1, so a decoder is a straight sequence of reads that stops at the
 * first failure. An absent member and JSON null both read as "not set", as in
 * the Kubernetes API. Strings handed out as const char * are borrowed from the
 * cJSON tree; json_decode_dup() copies.
 *
 * What a decoder accepts (ranges, enumerations, defaults) and the words of
 * those errors stay with the decoder; this module only knows JSON types.
 */
#ifndef DRASHIFT_JSON_DECODE_H
#define DRASHIFT_JSON_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Paths in error messages are truncated beyond this; they stay informative. */
#define JSON_DECODE_PATH_MAX 192
/* Values from the document quoted in errors are cut after this many bytes. */
#define JSON_DECODE_QUOTE_MAX 64
/* Room for json_decode_quote() of any string. */
#define JSON_DECODE_QUOTE_BUF (JSON_DECODE_QUOTE_MAX * 4 + 8)
/* Room for json_decode_key_component() of any key. */
#define JSON_DECODE_KEY_BUF (JSON_DECODE_QUOTE_BUF + 8)
/* Largest integer a JSON number (a double in cJSON) holds exactly: 2^53. */
#define JSON_DECODE_INT_MAX 9007199254740992.0

typedef struct {
	const cJSON *obj; /* object whose members are read; NULL: every member is absent */
	const char *path; /* path of obj from the top; "" at the top level */
	char *err;        /* where an error goes; NULL or errlen 0: nowhere */
	size_t errlen;
} json_decode_scope_t;

/* ---- paths and errors ---- */

/*
 * snprintf into a fixed buffer where cutting the text short is intended
 * (paths and messages stay informative when truncated). One wrapper keeps
 * -Wformat-truncation for the places where truncation would be a bug.
 */
/* Write an error message (truncated to errlen; err may be NULL) and return -1, so a decoder can return it. */
int json_decode_failf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void json_decode_bprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * s in double quotes with quotes, backslashes and control bytes escaped,
 * truncated to JSON_DECODE_QUOTE_MAX input bytes ("..." marks the cut);
 * always NUL-terminated in buf (JSON_DECODE_QUOTE_BUF holds any s).
 */
void json_decode_quote(char *buf, size_t n, const char *s);

/* path joined with key: "a.b" + "c" -> "a.b.c", "a" + "[2]" -> "a[2]", "" + "c" -> "c". */
void json_decode_join(char *buf, size_t n, const char *path, const char *key);

/* A map key from the document as a path component: ["example.com/gpu"]. */
void json_decode_key_component(char *buf, size_t n, const char *key);

/*
 * Write "PATH.KEY: message" (key NULL: "PATH: message"; "(top level)" for an
 * empty path) to s's error buffer. Returns -1, so readers can return it.
 */
int json_decode_fail(const json_decode_scope_t *s, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same for a path that is not a scope's: "PATH: message". Returns -1. */
int json_decode_fail_at(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- readers ---- */

/* The top-level scope of obj, which must be a JSON object ("(top level): not a JSON object"). */
int json_decode_top(const cJSON *obj, json_decode_scope_t *top, char *err, size_t errlen);

/* The member key of s, or NULL when absent or JSON null (both mean "not set"). */
const cJSON *json_decode_get(const json_decode_scope_t *s, const char *key);

/* A string member; *out NULL when absent and not required. */
int json_decode_str(const json_decode_scope_t *s, const char *key, bool required,
		    const char **out);

/* An owned copy of a string member; NULL when absent and not required. */
int json_decode_dup(const json_decode_scope_t *s, const char *key, bool required, char **out);

/*
 * Open the object member key of s as child, whose path is written to pathbuf
 * (which must outlive child). An absent optional object opens as a scope in
 * which every member is absent, so its defaults apply.
 */
int json_decode_obj(const json_decode_scope_t *s, const char *key, bool required,
		    json_decode_scope_t *child, char *pathbuf, size_t pathlen);

/*
 * The array member key of s, with at most max elements ("more than MAX
 * items"); *out NULL and *n 0 when absent. n may be NULL.
 */
int json_decode_arr(const json_decode_scope_t *s, const char *key, size_t max, const cJSON **out,
		    size_t *n);

/*
 * Open item, element i of the array member key of s (read with
 * json_decode_arr), as an object scope; its path "KEY[i]" goes to pathbuf.
 */
int json_decode_elem(const json_decode_scope_t *s, const char *key, size_t i, const cJSON *item,
		     json_decode_scope_t *child, char *pathbuf, size_t pathlen);

/* A boolean member; false when absent. */
int json_decode_bool(const json_decode_scope_t *s, const char *key, bool *out);

/*
 * An integer member: a JSON number without fraction within
 * +-JSON_DECODE_INT_MAX (larger doubles are not exact and are refused). 0
 * when absent and not required; *present (may be NULL) tells. The range a
 * field allows, and how its error reads, is the caller's.
 */
int json_decode_int(const json_decode_scope_t *s, const char *key, bool required, int64_t *out,
		    bool *present);

/*
 * v as a whole number within +-JSON_DECODE_INT_MAX: true and *out set, or
 * false (not a number, a fraction, out of range, NaN) with *out = 0. The one
 * safe way from a cJSON double to an integer: a cast of an out-of-range
 * double is undefined behaviour.
 */
bool json_number_int(const cJSON *v, int64_t *out);

/*
 * An RFC 3339 time member (rfc3339.h) as unix seconds, the fraction dropped:
 * decisions work in seconds. 0 when absent; *present (may be NULL) tells.
 */
int json_decode_time(const json_decode_scope_t *s, const char *key, int64_t *out, bool *present);

#endif
