/*
 * Internal to the kinds' decoders (projection*.c): the readers and sets they
 * share. Nothing outside controller/kinds/ includes this.
 */
#ifndef DRASHIFT_PROJECTION_DECODE_H
#define DRASHIFT_PROJECTION_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_decode.h"
#include "projection.h"
#include "strmap.h"

/*
 * A set of names borrowed from the cJSON tree, merged, then copied once. The
 * claims a pod uses and the extended resources a pod or a node lists have no
 * count limit in the API (only the object's size has): the sets grow. A name
 * is looked up by a scan while the set is small and through a hash index
 * (name -> position + 1) once it holds PROJ__SCAN_MAX names, so hostile sizes
 * cost linear work. Start from PROJ__NAMES_INIT, release with proj__names_free.
 */
#define PROJ__SCAN_MAX 16

typedef struct {
	const char **v;
	size_t n, cap;
	strmap_t index;
} proj__names_t;

#define PROJ__NAMES_INIT {NULL, 0, 0, STRMAP_INIT}

/* Quantity sets (extended resources): count[i] belongs to names.v[i]. */
typedef struct {
	proj__names_t names;
	int64_t *count;
	size_t cap;
} proj__qset_t;

#define PROJ__QSET_INIT {PROJ__NAMES_INIT, NULL, 0}

/* An integer member in [min, max]; 0 when absent and optional. */
int proj__int(const json_decode_scope_t *s, const char *key, bool required, int64_t min,
		int64_t max, int64_t *out);

/*
 * The first metadata.ownerReferences[] entry that is the controller
 * (want_kind NULL) or has kind want_kind. kind_out may be NULL.
 */
int proj__owner(const json_decode_scope_t *top, const char *want_kind, char **kind_out,
		char **name_out);

void proj__names_copy(const proj__names_t *set, char ***out, size_t *n);

void proj__names_free(proj__names_t *set);

/* Read an optional string member into a set; absent, null and empty are skipped. */
int proj__names_add_member(const json_decode_scope_t *s, const char *key, proj__names_t *set);

/*
 * Copy the string-valued members of map (optional object member key of s)
 * whose key starts with prefix (NULL: all). Members that are not kept are
 * not looked at.
 */
int proj__labels(const json_decode_scope_t *s, const char *key, const char *prefix,
		projection_label_t **out, size_t *n);

/* Empty the set, keeping its arrays for reuse. */
void proj__qset_clear(proj__qset_t *set);

void proj__qset_free(proj__qset_t *set);

/* dst[name] += src[name] for every name of src; -1 when a total leaves int64. */
int proj__qset_add(proj__qset_t *dst, const proj__qset_t *src);

/* dst[name] = max(dst[name], src[name]) for every name of src. */
void proj__qset_max(proj__qset_t *dst, const proj__qset_t *src);

/* dst = src. */
void proj__qset_assign(proj__qset_t *dst, const proj__qset_t *src);

/* The error for a total that left int64, at s.key. */
int proj__qset_overflow(const json_decode_scope_t *s, const char *key);

/*
 * Read the quantity map map (an object scope) into set, keeping names that
 * pass keep. With only_new, names already in the set are left alone (limits
 * stand in for requests only where requests are silent).
 */
int proj__qset_read(const json_decode_scope_t *map, proj__qset_t *set,
		bool (*keep)(const char *), bool only_new);

/* Copy a set into owned quantities; with positive_only, zero counts are dropped. */
void proj__qset_copy(const proj__qset_t *set, bool positive_only,
		projection_quantity_t **out, size_t *n);

/*
 * Find condition type in status.conditions[]. *cond is the condition's scope
 * (obj NULL when absent) and *status its status. Every entry's type must be a
 * string; the found one's status too.
 */
int proj__condition(const json_decode_scope_t *status, const char *type,
		json_decode_scope_t *cond, char *pathbuf, size_t pathlen,
		projection_condition_t *out);

void proj__free_labels(projection_label_t *l, size_t n);

void proj__free_quantities(projection_quantity_t *q, size_t n);

void proj__free_strings(char **v, size_t n);

size_t proj__size_labels(const projection_label_t *l, size_t n);

size_t proj__size_quantities(const projection_quantity_t *q, size_t n);

size_t proj__size_strings(char *const *v, size_t n);

/*
 * Packing a projection into one block (projection_pack_*): the struct, then
 * every string it owns, then (8-aligned) its arrays. A
 * pack function walks the projection twice with the same code: once to
 * measure (base NULL: the proj__pack_* calls return NULL and only count),
 * once to copy into a block of the measured size. Two cursors keep strings
 * and arrays apart, so the only padding is the one alignment before the
 * arrays.
 */
typedef struct {
	char *base;       /* the block; NULL while measuring */
	size_t strings;   /* next string byte, from the block's start */
	size_t arrays;    /* next array byte, from the block's start */
	strmap_t *shared; /* the pool for proj__pack_shared (strmap_intern), or NULL */
} proj__pack_t;

/*
 * Run walk(k, src, dst) to measure, allocate the block, run it again to copy,
 * and return the block. size is sizeof the struct, which is copied whole
 * first, so the walk only sets the pointers.
 */
void *proj__pack(const void *src, size_t size, strmap_t *shared,
		 void (*walk)(proj__pack_t *k, const void *src, void *dst));

/* The meta's strings (and its scalars); the namespace is shared. */
void proj__pack_meta(proj__pack_t *k, const kube_object_meta_t *src, kube_object_meta_t *dst);

/* A copy of s in the block (NULL for NULL, and while measuring). */
char *proj__pack_str(proj__pack_t *k, const char *s);

/*
 * For a string many cached objects repeat (a namespace, a node or resource
 * name): the pool's copy, counting a reference; without a pool, a copy in the
 * block. Each one the walk shares, the kind's free_packed must unshare.
 */
char *proj__pack_shared(proj__pack_t *k, const char *s);

/* Drop the reference proj__pack_shared took (nothing for NULL s or pool). */
void proj__unshare(strmap_t *shared, const char *s);
void proj__unshare_meta(strmap_t *shared, const kube_object_meta_t *m);

/* Room for n elements of elem bytes, zeroed (NULL when n is 0, and while measuring). */
void *proj__pack_array(proj__pack_t *k, size_t n, size_t elem);

/* An array of n strings and the strings, shared or not (NULL when n is 0, and while measuring). */
char **proj__pack_strings(proj__pack_t *k, char *const *v, size_t n, bool share);

/* An array of n quantities and their names, shared (NULL when n is 0, and while measuring). */
projection_quantity_t *proj__pack_quantities(proj__pack_t *k, const projection_quantity_t *q, size_t n);

/*
 * An array of n labels, the keys shared (every node has much the same) and
 * the values copied (NULL when n is 0, and while measuring).
 */
projection_label_t *proj__pack_labels(proj__pack_t *k, const projection_label_t *l, size_t n);

/* Unshare what proj__pack_strings (shared), _quantities and _labels shared. */
void proj__unshare_strings(strmap_t *shared, char *const *v, size_t n);
void proj__unshare_quantities(strmap_t *shared, const projection_quantity_t *q, size_t n);
void proj__unshare_labels(strmap_t *shared, const projection_label_t *l, size_t n);

#endif
