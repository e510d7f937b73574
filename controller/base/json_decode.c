/*
 * Reading untrusted JSON with one-line errors that name the field; see
 * json_decode.h.
 */
#include "json_decode.h"

#include "rfc3339.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- paths and errors ---- */

void json_decode_bprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

int json_decode_failf(char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void json_decode_quote(char *buf, size_t n, const char *s)
{
	size_t o = 0;
	size_t i = 0;
	if (n < 8) {
		if (n > 0)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '"';
	for (; s[i] != '\0' && i < JSON_DECODE_QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		/* Worst case one byte becomes \xNN (4) and the tail needs "..."+quote+NUL (5). */
		if (o + 9 > n)
			break;
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			static const char hex[] = "0123456789abcdef";
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 0xf];
		} else {
			buf[o++] = (char)c;
		}
	}
	if (s[i] != '\0') {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

void json_decode_join(char *buf, size_t n, const char *path, const char *key)
{
	if (key == NULL || key[0] == '\0')
		json_decode_bprintf(buf, n, "%s", path);
	else if (path[0] == '\0')
		json_decode_bprintf(buf, n, "%s", key);
	else if (key[0] == '[')
		json_decode_bprintf(buf, n, "%s%s", path, key);
	else
		json_decode_bprintf(buf, n, "%s.%s", path, key);
}

void json_decode_key_component(char *buf, size_t n, const char *key)
{
	char q[JSON_DECODE_QUOTE_BUF];
	json_decode_quote(q, sizeof(q), key);
	json_decode_bprintf(buf, n, "[%s]", q);
}

/*
 * The message is formatted on its own first, so a long path is what gets
 * cut, not the problem; 320 bytes hold any message with one quoted value.
 */
static int json_decode__vfail(char *err, size_t errlen, const char *path, const char *key,
			      const char *fmt, va_list ap)
{
	if (err == NULL || errlen == 0)
		return -1;
	char where[JSON_DECODE_PATH_MAX];
	char msg[320];
	json_decode_join(where, sizeof(where), path, key);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	json_decode_bprintf(err, errlen, "%s: %s", where[0] != '\0' ? where : "(top level)", msg);
	return -1;
}

int json_decode_fail(const json_decode_scope_t *s, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_decode__vfail(s->err, s->errlen, s->path, key, fmt, ap);
	va_end(ap);
	return -1;
}

int json_decode_fail_at(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_decode__vfail(err, errlen, path, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- readers ---- */

int json_decode_top(const cJSON *obj, json_decode_scope_t *top, char *err, size_t errlen)
{
	*top = (json_decode_scope_t){.obj = obj, .path = "", .err = err, .errlen = errlen};
	if (!cJSON_IsObject(obj))
		return json_decode_fail_at(err, errlen, "", "not a JSON object");
	return 0;
}

const cJSON *json_decode_get(const json_decode_scope_t *s, const char *key)
{
	if (s->obj == NULL)
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s->obj, key);
	return cJSON_IsNull(v) ? NULL : v;
}

int json_decode_str(const json_decode_scope_t *s, const char *key, bool required,
		    const char **out)
{
	const cJSON *v = json_decode_get(s, key);
	*out = NULL;
	if (v == NULL)
		return required ? json_decode_fail(s, key, "missing") : 0;
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return json_decode_fail(s, key, "not a string");
	*out = v->valuestring;
	return 0;
}

int json_decode_dup(const json_decode_scope_t *s, const char *key, bool required, char **out)
{
	const char *v;
	if (json_decode_str(s, key, required, &v) != 0)
		return -1;
	*out = v != NULL ? xstrdup(v) : NULL;
	return 0;
}

int json_decode_obj(const json_decode_scope_t *s, const char *key, bool required,
		    json_decode_scope_t *child, char *pathbuf, size_t pathlen)
{
	const cJSON *v = json_decode_get(s, key);
	json_decode_join(pathbuf, pathlen, s->path, key);
	*child = (json_decode_scope_t){.path = pathbuf, .err = s->err, .errlen = s->errlen};
	if (v == NULL)
		return required ? json_decode_fail(s, key, "missing") : 0;
	if (!cJSON_IsObject(v))
		return json_decode_fail(s, key, "not an object");
	child->obj = v;
	return 0;
}

int json_decode_arr(const json_decode_scope_t *s, const char *key, size_t max, const cJSON **out,
		    size_t *n)
{
	const cJSON *v = json_decode_get(s, key);
	const cJSON *e;
	size_t count = 0;
	*out = NULL;
	if (n != NULL)
		*n = 0;
	if (v == NULL)
		return 0;
	if (!cJSON_IsArray(v))
		return json_decode_fail(s, key, "not an array");
	cJSON_ArrayForEach(e, v)
	{
		if (++count > max)
			return json_decode_fail(s, key, "more than %zu items", max);
	}
	*out = v;
	if (n != NULL)
		*n = count;
	return 0;
}

int json_decode_elem(const json_decode_scope_t *s, const char *key, size_t i, const cJSON *item,
		     json_decode_scope_t *child, char *pathbuf, size_t pathlen)
{
	char where[JSON_DECODE_PATH_MAX];
	json_decode_join(where, sizeof(where), s->path, key);
	json_decode_bprintf(pathbuf, pathlen, "%s[%zu]", where, i);
	*child = (json_decode_scope_t){.path = pathbuf, .err = s->err, .errlen = s->errlen};
	if (!cJSON_IsObject(item))
		return json_decode_fail_at(s->err, s->errlen, pathbuf, "not an object");
	child->obj = item;
	return 0;
}

int json_decode_bool(const json_decode_scope_t *s, const char *key, bool *out)
{
	const cJSON *v = json_decode_get(s, key);
	*out = false;
	if (v == NULL)
		return 0;
	if (!cJSON_IsBool(v))
		return json_decode_fail(s, key, "not a boolean");
	*out = cJSON_IsTrue(v);
	return 0;
}

bool json_number_int(const cJSON *v, int64_t *out)
{
	*out = 0;
	if (!cJSON_IsNumber(v))
		return false;
	double d = v->valuedouble;
	if (!(d >= -JSON_DECODE_INT_MAX && d <= JSON_DECODE_INT_MAX) || (double)(int64_t)d != d)
		return false;
	*out = (int64_t)d;
	return true;
}

int json_decode_int(const json_decode_scope_t *s, const char *key, bool required, int64_t *out,
		    bool *present)
{
	const cJSON *v = json_decode_get(s, key);
	*out = 0;
	if (present != NULL)
		*present = false;
	if (v == NULL)
		return required ? json_decode_fail(s, key, "missing") : 0;
	if (!cJSON_IsNumber(v))
		return json_decode_fail(s, key, "not a number");
	double d = v->valuedouble;
	if (!(d >= -JSON_DECODE_INT_MAX && d <= JSON_DECODE_INT_MAX))
		return json_decode_fail(s, key, "out of range");
	if (!json_number_int(v, out))
		return json_decode_fail(s, key, "not an integer");
	if (present != NULL)
		*present = true;
	return 0;
}

int json_decode_time(const json_decode_scope_t *s, const char *key, int64_t *out, bool *present)
{
	const char *v;
	int64_t us;
	*out = 0;
	if (present != NULL)
		*present = false;
	if (json_decode_str(s, key, false, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (rfc3339_parse(v, &us) != 0) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), v);
		return json_decode_fail(s, key, "not an RFC 3339 time %s", q);
	}
	*out = us / 1000000 - (us % 1000000 < 0);
	if (present != NULL)
		*present = true;
	return 0;
}
