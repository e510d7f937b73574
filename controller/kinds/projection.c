/*
 * What the decoders of every kind share (projection_decode.h): integers,
 * quantities, owner references, string and quantity sets, label maps,
 * conditions, and freeing and sizing their parts. The decoders themselves
 * are one file per kind (projection_node.c, projection_pod.c, ...); see
 * projection.h.
 *
 * Every read goes through a json_decode scope (json_decode.h): the readers
 * there (string, object, array, bool, integer) and the few below that only
 * projections need (time, quantity, label map, condition) check the JSON type
 * and, when it is wrong, write "PATH.KEY: problem" and return -1, so a decoder
 * is a straight sequence of reads that bails out at the first failure. Keys
 * taken from the document (labels, resource names) appear in paths quoted with
 * control bytes escaped: an error must stay one log line whatever the peer sent.
 *
 * Decoders fill *out directly, from a zeroed start, keeping every array's
 * count equal to its allocated length (elements start zeroed). On failure the
 * matching free function can therefore release a half-built projection, which
 * is how "nothing leaks, *out zeroed" is kept on every error path.
 *
 * Names are borrowed from the cJSON tree while sets are merged and copied
 * once at the end, so each kept string is exactly one allocation of its own
 * length and each array exactly its final size: the per-object cost that
 * projection_size_* reports is what such a projection costs.
 *
 * The caches keep the kinds they hold by the thousand packed instead
 * (projection_pack_*, proj__pack below): one block holds the struct and
 * every string and array, which saves a malloc chunk header and the rounding
 * to 16 bytes per string.
 */
#include "projection_decode.h"

#include "xalloc.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer member in [min, max]; 0 when absent and optional. */
int proj__int(const json_decode_scope_t *s, const char *key, bool required, int64_t min,
		int64_t max, int64_t *out)
{
	bool present;
	if (json_decode_int(s, key, required, out, &present) != 0)
		return -1;
	if (present && (*out < min || *out > max))
		return json_decode_fail(s, key, "out of range (%lld)", (long long)*out);
	return 0;
}

/* ---- quantities ---- */

/*
 * The integer forms of a resource.Quantity string: digits with an optional
 * decimal SI suffix (k M G T P E), binary SI suffix (Ki .. Ei) or decimal
 * exponent (e3). The API server writes quantities canonically, which for an
 * integer amount of 1000 is "1k", so plain digits alone are not enough.
 * Fractions and milli ("500m") are not whole devices and are refused, as are
 * negative amounts and amounts beyond int64. Returns NULL or the problem.
 */
static const char *proj__parse_count(const char *s, int64_t *out)
{
	const char *p = s;
	int64_t v = 0;
	if (*p == '+')
		p++;
	else if (*p == '-')
		return "negative quantity";
	if (*p < '0' || *p > '9')
		return "not a quantity";
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return "quantity out of range";
	}
	int64_t mult = 1;
	int exp10 = 0;
	if (*p == '\0') {
		/* plain integer */
	} else if (*p == '.' || (*p == 'm' && p[1] == '\0') || (*p == 'u' && p[1] == '\0') ||
		   (*p == 'n' && p[1] == '\0')) {
		return "not a whole number";
	} else if (p[1] == 'i' && p[2] == '\0' && p[0] != '\0' && strchr("KMGTPE", p[0]) != NULL) {
		/* Ki = 2^10 .. Ei = 2^60: the multiplier itself always fits. */
		mult = (int64_t)1 << (10 * (int)(strchr("KMGTPE", p[0]) - "KMGTPE" + 1));
	} else if (p[1] == '\0' && strchr("kMGTPE", p[0]) != NULL) {
		exp10 = 3 * (int)(strchr("kMGTPE", p[0]) - "kMGTPE" + 1);
	} else if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+')
			p++;
		else if (*p == '-')
			return "not a whole number";
		if (*p < '0' || *p > '9')
			return "not a quantity";
		for (; *p >= '0' && *p <= '9'; p++) {
			if (exp10 < 1000)
				exp10 = exp10 * 10 + (*p - '0');
		}
		if (*p != '\0')
			return "not a quantity";
	} else {
		return "not a quantity";
	}
	for (int i = 0; i < exp10 && v != 0; i++) {
		if (__builtin_mul_overflow(v, 10, &v))
			return "quantity out of range";
	}
	if (__builtin_mul_overflow(v, mult, &v))
		return "quantity out of range";
	*out = v;
	return NULL;
}

/*
 * The first metadata.ownerReferences[] entry that is the controller
 * (want_kind NULL) or has kind want_kind. kind_out may be NULL.
 */
int proj__owner(const json_decode_scope_t *top, const char *want_kind, char **kind_out,
		char **name_out)
{
	char mpath[JSON_DECODE_PATH_MAX], epath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md, ref;
	const cJSON *refs, *item;
	size_t i = 0;
	if (json_decode_obj(top, "metadata", false, &md, mpath, sizeof(mpath)) != 0 ||
	    json_decode_arr(&md, "ownerReferences", SIZE_MAX, &refs, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, refs)
	{
		const char *kind;
		bool controller;
		if (json_decode_elem(&md, "ownerReferences", i++, item, &ref, epath,
				     sizeof(epath)) != 0 ||
		    json_decode_str(&ref, "kind", true, &kind) != 0 ||
		    json_decode_bool(&ref, "controller", &controller) != 0)
			return -1;
		if (want_kind != NULL ? strcmp(kind, want_kind) != 0 : !controller)
			continue;
		if (json_decode_dup(&ref, "name", true, name_out) != 0)
			return -1;
		if (kind_out != NULL)
			*kind_out = xstrdup(kind);
		return 0;
	}
	return 0;
}

/* ---- name sets (borrowed names, merged, then copied once; see projection_decode.h) ---- */

/* The position of name in the set, or SIZE_MAX when absent. */
static size_t proj__names_find(const proj__names_t *set, const char *name)
{
	if (set->n >= PROJ__SCAN_MAX) {
		uintptr_t at = (uintptr_t)strmap_get(&set->index, name);
		return at != 0 ? (size_t)at - 1 : SIZE_MAX;
	}
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->v[i], name) == 0)
			return i;
	}
	return SIZE_MAX;
}

/* Append name, which is not in the set; returns its position. */
static size_t proj__names_append(proj__names_t *set, const char *name)
{
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 8;
		set->v = xrealloc(set->v, set->cap * sizeof(*set->v));
	}
	set->v[set->n++] = name;
	if (set->n == PROJ__SCAN_MAX) {
		for (size_t i = 0; i < set->n; i++)
			strmap_put(&set->index, set->v[i], (void *)(uintptr_t)(i + 1));
	} else if (set->n > PROJ__SCAN_MAX) {
		strmap_put(&set->index, name, (void *)(uintptr_t)set->n);
	}
	return set->n - 1;
}

void proj__names_free(proj__names_t *set)
{
	strmap_clear(&set->index, NULL);
	free(set->v);
}

void proj__names_copy(const proj__names_t *set, char ***out, size_t *n)
{
	if (set->n == 0)
		return;
	*out = xcalloc(set->n, sizeof(**out));
	*n = set->n;
	for (size_t i = 0; i < set->n; i++)
		(*out)[i] = xstrdup(set->v[i]);
}

int proj__names_add_member(const json_decode_scope_t *s, const char *key, proj__names_t *set)
{
	const char *v;
	if (json_decode_str(s, key, false, &v) != 0)
		return -1;
	if (v != NULL && v[0] != '\0' && proj__names_find(set, v) == SIZE_MAX)
		proj__names_append(set, v);
	return 0;
}

/* ---- label maps ---- */

/*
 * Copy the string-valued members of map (optional object member key of s)
 * whose key starts with prefix (NULL: all). Members that are not kept are
 * not looked at.
 */
int proj__labels(const json_decode_scope_t *s, const char *key, const char *prefix,
		projection_label_t **out, size_t *n)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t map;
	const cJSON *e;
	size_t count = 0, prefix_len = prefix != NULL ? strlen(prefix) : 0;
	if (json_decode_obj(s, key, false, &map, path, sizeof(path)) != 0)
		return -1;
	cJSON_ArrayForEach(e, map.obj)
	{
		if (e->string == NULL || (prefix != NULL && strncmp(e->string, prefix, prefix_len) != 0))
			continue;
		if (!cJSON_IsString(e) || e->valuestring == NULL) {
			char comp[JSON_DECODE_KEY_BUF];
			json_decode_key_component(comp, sizeof(comp), e->string);
			return json_decode_fail(&map, comp, "not a string");
		}
		count++;
	}
	if (count == 0)
		return 0;
	*out = xcalloc(count, sizeof(**out));
	*n = count;
	size_t i = 0;
	cJSON_ArrayForEach(e, map.obj)
	{
		if (e->string == NULL || (prefix != NULL && strncmp(e->string, prefix, prefix_len) != 0))
			continue;
		(*out)[i].key = xstrdup(e->string);
		(*out)[i].value = xstrdup(e->valuestring);
		i++;
	}
	return 0;
}

/* ---- quantity sets (extended resources) ---- */

/* The count for name, created at 0 when absent; valid until the set grows again. */
static int64_t *proj__qset_slot(proj__qset_t *set, const char *name)
{
	size_t i = proj__names_find(&set->names, name);
	if (i != SIZE_MAX)
		return &set->count[i];
	i = proj__names_append(&set->names, name);
	if (set->cap < set->names.cap) {
		set->cap = set->names.cap;
		set->count = xrealloc(set->count, set->cap * sizeof(*set->count));
	}
	set->count[i] = 0;
	return &set->count[i];
}

void proj__qset_clear(proj__qset_t *set)
{
	set->names.n = 0;
	strmap_clear(&set->names.index, NULL);
}

void proj__qset_free(proj__qset_t *set)
{
	proj__names_free(&set->names);
	free(set->count);
}

int proj__qset_add(proj__qset_t *dst, const proj__qset_t *src)
{
	for (size_t i = 0; i < src->names.n; i++) {
		int64_t *q = proj__qset_slot(dst, src->names.v[i]);
		if (__builtin_add_overflow(*q, src->count[i], q))
			return -1;
	}
	return 0;
}

void proj__qset_max(proj__qset_t *dst, const proj__qset_t *src)
{
	for (size_t i = 0; i < src->names.n; i++) {
		int64_t *q = proj__qset_slot(dst, src->names.v[i]);
		if (src->count[i] > *q)
			*q = src->count[i];
	}
}

void proj__qset_assign(proj__qset_t *dst, const proj__qset_t *src)
{
	proj__qset_clear(dst);
	proj__qset_max(dst, src);
}

int proj__qset_overflow(const json_decode_scope_t *s, const char *key)
{
	return json_decode_fail(s, key, "extended resource total out of range");
}

/*
 * Read the quantity map map (an object scope) into set, keeping names that
 * pass keep. With only_new, names already in the set are left alone (limits
 * stand in for requests only where requests are silent).
 */
int proj__qset_read(const json_decode_scope_t *map, proj__qset_t *set,
		bool (*keep)(const char *), bool only_new)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, map->obj)
	{
		if (e->string == NULL || !keep(e->string))
			continue;
		if (only_new && proj__names_find(&set->names, e->string) != SIZE_MAX)
			continue;
		char comp[JSON_DECODE_KEY_BUF];
		json_decode_key_component(comp, sizeof(comp), e->string);
		if (!cJSON_IsString(e) || e->valuestring == NULL)
			return json_decode_fail(map, comp, "not a quantity string");
		int64_t count;
		const char *problem = proj__parse_count(e->valuestring, &count);
		if (problem != NULL) {
			char q[JSON_DECODE_QUOTE_BUF];
			json_decode_quote(q, sizeof(q), e->valuestring);
			return json_decode_fail(map, comp, "%s %s", problem, q);
		}
		*proj__qset_slot(set, e->string) = count;
	}
	return 0;
}

/* Copy a set into owned quantities; with positive_only, zero counts are dropped. */
void proj__qset_copy(const proj__qset_t *set, bool positive_only,
		projection_quantity_t **out, size_t *n)
{
	size_t count = 0;
	for (size_t i = 0; i < set->names.n; i++)
		count += !positive_only || set->count[i] > 0;
	if (count == 0)
		return;
	*out = xcalloc(count, sizeof(**out));
	*n = count;
	size_t o = 0;
	for (size_t i = 0; i < set->names.n; i++) {
		if (positive_only && set->count[i] <= 0)
			continue;
		(*out)[o].name = xstrdup(set->names.v[i]);
		(*out)[o].count = set->count[i];
		o++;
	}
}

/* ---- conditions ---- */

static projection_condition_t proj__condition_status(const char *s)
{
	if (strcmp(s, "True") == 0)
		return PROJECTION_CONDITION_TRUE;
	if (strcmp(s, "False") == 0)
		return PROJECTION_CONDITION_FALSE;
	return PROJECTION_CONDITION_UNKNOWN;
}

const char *projection_label_find(const projection_label_t *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i].key, key) == 0)
			return l[i].value;
	return NULL;
}

bool projection_quantity_find(const projection_quantity_t *q, size_t n, const char *name,
			      int64_t *count)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(q[i].name, name) == 0) {
			if (count != NULL)
				*count = q[i].count;
			return true;
		}
	}
	return false;
}

/*
 * Find condition type in status.conditions[]. *cond is the condition's scope
 * (obj NULL when absent) and *status its status. Every entry's type must be a
 * string; the found one's status too.
 */
int proj__condition(const json_decode_scope_t *status, const char *type,
		json_decode_scope_t *cond, char *pathbuf, size_t pathlen,
		projection_condition_t *out)
{
	const cJSON *conds, *item;
	size_t i = 0;
	*out = PROJECTION_CONDITION_NONE;
	*cond = (json_decode_scope_t){.path = pathbuf, .err = status->err,
				      .errlen = status->errlen};
	pathbuf[0] = '\0';
	if (json_decode_arr(status, "conditions", SIZE_MAX, &conds, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, conds)
	{
		const char *t, *st;
		if (json_decode_elem(status, "conditions", i++, item, cond, pathbuf, pathlen) !=
			    0 ||
		    json_decode_str(cond, "type", true, &t) != 0)
			return -1;
		if (strcmp(t, type) != 0)
			continue;
		if (json_decode_str(cond, "status", true, &st) != 0)
			return -1;
		*out = proj__condition_status(st);
		return 0;
	}
	cond->obj = NULL;
	return 0;
}

/* ---- freeing ---- */

void proj__free_labels(projection_label_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].key);
		free(l[i].value);
	}
	free(l);
}

void proj__free_quantities(projection_quantity_t *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(q[i].name);
	free(q);
}

void proj__free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- size accounting ---- */

size_t proj__size_labels(const projection_label_t *l, size_t n)
{
	size_t s = kube_object_usable(l);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(l[i].key) + kube_object_usable(l[i].value);
	return s;
}

size_t proj__size_quantities(const projection_quantity_t *q, size_t n)
{
	size_t s = kube_object_usable(q);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(q[i].name);
	return s;
}

size_t proj__size_strings(char *const *v, size_t n)
{
	size_t s = kube_object_usable(v);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(v[i]);
	return s;
}

/* ---- packing (see projection_decode.h) ---- */

/* Arrays hold pointers and int64 counts. */
#define PROJ__PACK_ALIGN (alignof(void *) > alignof(int64_t) ? alignof(void *) : alignof(int64_t))

static size_t proj__align(size_t n)
{
	return (n + PROJ__PACK_ALIGN - 1) & ~(size_t)(PROJ__PACK_ALIGN - 1);
}

void *proj__pack(const void *src, size_t size, strmap_t *shared,
		 void (*walk)(proj__pack_t *k, const void *src, void *dst))
{
	_Alignas(max_align_t) unsigned char dummy[1024]; /* the measuring walk's dst */
	if (size > sizeof(dummy))
		abort(); /* a projection struct is a few hundred bytes */
	memset(dummy, 0, size);
	proj__pack_t k = { .base = NULL, .strings = 0, .arrays = 0, .shared = shared };
	walk(&k, src, dummy);
	size_t strings = k.strings, arrays = k.arrays;
	size_t arrays_at = proj__align(size + strings);
	char *block = xmalloc(arrays_at + arrays);
	memcpy(block, src, size);
	k = (proj__pack_t){ .base = block, .strings = size, .arrays = arrays_at, .shared = shared };
	walk(&k, src, block);
	if (k.strings != size + strings || k.arrays != arrays_at + arrays)
		abort(); /* the two walks must lay out the same bytes */
	return block;
}

char *proj__pack_str(proj__pack_t *k, const char *s)
{
	if (s == NULL)
		return NULL;
	size_t len = strlen(s) + 1;
	char *at = k->base ? memcpy(k->base + k->strings, s, len) : NULL;
	k->strings += len;
	return at;
}

char *proj__pack_shared(proj__pack_t *k, const char *s)
{
	if (s == NULL || k->shared == NULL)
		return proj__pack_str(k, s);
	return k->base ? (char *)strmap_intern(k->shared, s) : NULL;
}

void proj__unshare(strmap_t *shared, const char *s)
{
	if (s != NULL && shared != NULL)
		strmap_unintern(shared, s);
}

void proj__unshare_meta(strmap_t *shared, const kube_object_meta_t *m)
{
	proj__unshare(shared, m->namespace);
}

void proj__pack_meta(proj__pack_t *k, const kube_object_meta_t *src, kube_object_meta_t *dst)
{
	dst->namespace = proj__pack_shared(k, src->namespace);
	dst->name = proj__pack_str(k, src->name);
	dst->uid = proj__pack_str(k, src->uid);
	dst->resource_version = proj__pack_str(k, src->resource_version);
	dst->created = src->created;
	dst->deleting = src->deleting;
	dst->deleted = src->deleted;
}

void *proj__pack_array(proj__pack_t *k, size_t n, size_t elem)
{
	if (n == 0)
		return NULL;
	size_t bytes = proj__align(n * elem);
	void *at = k->base ? memset(k->base + k->arrays, 0, bytes) : NULL;
	k->arrays += bytes;
	return at;
}

char **proj__pack_strings(proj__pack_t *k, char *const *v, size_t n, bool share)
{
	char **out = proj__pack_array(k, n, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		char *s = share ? proj__pack_shared(k, v[i]) : proj__pack_str(k, v[i]);
		if (out != NULL)
			out[i] = s;
	}
	return out;
}

projection_quantity_t *proj__pack_quantities(proj__pack_t *k, const projection_quantity_t *q, size_t n)
{
	projection_quantity_t *out = proj__pack_array(k, n, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		char *name = proj__pack_shared(k, q[i].name);
		if (out != NULL)
			out[i] = (projection_quantity_t){ .name = name, .count = q[i].count };
	}
	return out;
}

projection_label_t *proj__pack_labels(proj__pack_t *k, const projection_label_t *l, size_t n)
{
	projection_label_t *out = proj__pack_array(k, n, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		char *key = proj__pack_shared(k, l[i].key);
		char *value = proj__pack_str(k, l[i].value);
		if (out != NULL)
			out[i] = (projection_label_t){ .key = key, .value = value };
	}
	return out;
}

void proj__unshare_strings(strmap_t *shared, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proj__unshare(shared, v[i]);
}

void proj__unshare_quantities(strmap_t *shared, const projection_quantity_t *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proj__unshare(shared, q[i].name);
}

void proj__unshare_labels(strmap_t *shared, const projection_label_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proj__unshare(shared, l[i].key);
}
