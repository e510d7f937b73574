#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xalloc.h"

#define METRICS_MIN_SLOTS 4u

const double metrics_default_buckets[METRICS_DEFAULT_BUCKETS_COUNT] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};

typedef enum {
	METRICS_COUNTER,
	METRICS_GAUGE,
	METRICS_HISTOGRAM,
} metrics_kind_t;

static const char *const metrics_kind_names[] = { "counter", "gauge", "histogram" };

/* One time series (counter, gauge) or one histogram: a tuple of label values. */
typedef struct {
	uint64_t hash;
	double value;          /* counter, gauge */
	metrics_gauge_fn fn;   /* callback gauge when not NULL */
	void *fn_data;
	double sum;            /* histogram */
	uint64_t count;        /* histogram */
	uint64_t *buckets;     /* histogram: nbounds + 1 counts, not cumulative; last is +Inf */
	char *values[];        /* nlabels label values */
} metrics_child_t;

typedef struct {
	metrics_kind_t kind;
	char *name;
	char *help;
	size_t nlabels;
	char *labels[METRICS_MAX_LABELS];
	double *bounds;        /* histogram: finite upper bounds, strictly increasing */
	size_t nbounds;

	/* Children by label values: open addressing, linear probing, load <= 1/2. */
	metrics_child_t **slots;
	size_t slots_cap;      /* power of two */
	size_t nchildren;
	/* The same children sorted by label values, kept so on insertion for render. */
	metrics_child_t **sorted;
	size_t sorted_cap;
} metrics_family_t;

/*
 * The public types are distinct so that the compiler refuses a gauge where a
 * counter is expected; each is just a family.
 */
struct metrics_counter {
	metrics_family_t family;
};
struct metrics_gauge {
	metrics_family_t family;
};
struct metrics_histogram {
	metrics_family_t family;
};

struct metrics_registry {
	metrics_family_t **families; /* sorted by name */
	size_t nfamilies;
	size_t cap;
};

static void metrics_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void metrics_die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("metrics misuse", "error", msg);
	abort();
}

/* ---- names --------------------------------------------------------------- */

static bool metrics_name_char(char c, bool first, bool colon_ok)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (c == ':')
		return colon_ok;
	return !first && c >= '0' && c <= '9';
}

static bool metrics_valid_name(const char *s, bool colon_ok)
{
	if (s == NULL || *s == '\0')
		return false;
	for (size_t i = 0; s[i] != '\0'; i++) {
		if (!metrics_name_char(s[i], i == 0, colon_ok))
			return false;
	}
	return true;
}

/* ---- children ------------------------------------------------------------ */

/* FNV-1a over the values, each followed by 0xff, which UTF-8 never contains. */
static uint64_t metrics_hash_values(const char *const *values, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < n; i++) {
		for (const unsigned char *p = (const unsigned char *)values[i]; *p != '\0'; p++) {
			h ^= *p;
			h *= 0x100000001b3u;
		}
		h ^= 0xffu;
		h *= 0x100000001b3u;
	}
	return h;
}

static int metrics_values_cmp(const char *const *a, const char *const *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = strcmp(a[i], b[i]);
		if (c != 0)
			return c;
	}
	return 0;
}

/* The slot holding values, or the empty slot where they would go. */
static size_t metrics_slot_find(const metrics_family_t *f, const char *const *values, uint64_t hash)
{
	size_t mask = f->slots_cap - 1;
	size_t i = (size_t)hash & mask;
	while (f->slots[i] != NULL) {
		const metrics_child_t *c = f->slots[i];
		if (c->hash == hash && metrics_values_cmp((const char *const *)c->values, values, f->nlabels) == 0)
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

static void metrics_slots_grow(metrics_family_t *f)
{
	size_t old_cap = f->slots_cap;
	metrics_child_t **old = f->slots;
	f->slots_cap = old_cap * 2;
	f->slots = xcalloc(f->slots_cap, sizeof(*f->slots));
	size_t mask = f->slots_cap - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i] == NULL)
			continue;
		size_t j = (size_t)old[i]->hash & mask;
		while (f->slots[j] != NULL)
			j = (j + 1) & mask;
		f->slots[j] = old[i];
	}
	free(old);
}

/* Index in f->sorted where values are, or would be inserted. */
static size_t metrics_sorted_position(const metrics_family_t *f, const char *const *values, bool *found)
{
	size_t lo = 0, hi = f->nchildren;
	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = metrics_values_cmp((const char *const *)f->sorted[mid]->values, values, f->nlabels);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static metrics_child_t *metrics_child_lookup(const metrics_family_t *f, const char *const *values)
{
	return f->slots[metrics_slot_find(f, values, metrics_hash_values(values, f->nlabels))];
}

/*
 * Returns the child for values, creating it on first use. Creation is the
 * rare path (once per label tuple over the process's life), so it may pay
 * for keeping the sorted array in order; lookups only hash.
 */
static metrics_child_t *metrics_child_get(metrics_family_t *f, const char *const *values)
{
	uint64_t hash = metrics_hash_values(values, f->nlabels);
	size_t i = metrics_slot_find(f, values, hash);
	if (f->slots[i] != NULL)
		return f->slots[i];
	if ((f->nchildren + 1) * 2 > f->slots_cap) {
		metrics_slots_grow(f);
		i = metrics_slot_find(f, values, hash);
	}
	metrics_child_t *c = xcalloc(1, sizeof(*c) + f->nlabels * sizeof(c->values[0]));
	c->hash = hash;
	for (size_t l = 0; l < f->nlabels; l++)
		c->values[l] = xstrdup(values[l]);
	if (f->kind == METRICS_HISTOGRAM)
		c->buckets = xcalloc(f->nbounds + 1, sizeof(*c->buckets));
	f->slots[i] = c;

	bool found;
	size_t pos = metrics_sorted_position(f, values, &found);
	if (f->nchildren == f->sorted_cap) {
		f->sorted_cap = f->sorted_cap ? f->sorted_cap * 2 : METRICS_MIN_SLOTS;
		f->sorted = xrealloc(f->sorted, f->sorted_cap * sizeof(*f->sorted));
	}
	memmove(&f->sorted[pos + 1], &f->sorted[pos], (f->nchildren - pos) * sizeof(*f->sorted));
	f->sorted[pos] = c;
	f->nchildren++;
	return c;
}

static void metrics_child_free(const metrics_family_t *f, metrics_child_t *c)
{
	for (size_t l = 0; l < f->nlabels; l++)
		free(c->values[l]);
	free(c->buckets);
	free(c);
}

/* Backward-shift deletion, as in workqueue.c: no tombstones pile up. */
static void metrics_slot_remove(metrics_family_t *f, size_t i)
{
	size_t mask = f->slots_cap - 1;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (f->slots[j] == NULL)
			break;
		size_t home = (size_t)f->slots[j]->hash & mask;
		bool home_in_range = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (!home_in_range) {
			f->slots[i] = f->slots[j];
			i = j;
		}
	}
	f->slots[i] = NULL;
}

static int metrics_child_remove(metrics_family_t *f, const char *const *values)
{
	if (f->nlabels == 0)
		metrics_die("%s has no labels: its only series cannot be removed", f->name);
	size_t i = metrics_slot_find(f, values, metrics_hash_values(values, f->nlabels));
	metrics_child_t *c = f->slots[i];
	if (c == NULL)
		return -1;
	metrics_slot_remove(f, i);
	bool found;
	size_t pos = metrics_sorted_position(f, values, &found);
	memmove(&f->sorted[pos], &f->sorted[pos + 1], (f->nchildren - pos - 1) * sizeof(*f->sorted));
	f->nchildren--;
	metrics_child_free(f, c);
	return 0;
}

/*
 * Reads the NULL-ended label values of an update call into values[] and
 * checks there is exactly one per label name. Never reads past the NULL, nor
 * past nlabels + 1 arguments.
 */
static void metrics_collect_values(const metrics_family_t *f, va_list ap, const char **values)
{
	size_t n = 0;
	for (;;) {
		const char *v = va_arg(ap, const char *);
		if (v == NULL)
			break;
		if (n == f->nlabels)
			metrics_die("%s: more label values than its %zu labels", f->name, f->nlabels);
		values[n++] = v;
	}
	if (n != f->nlabels)
		metrics_die("%s: %zu label values for %zu labels", f->name, n, f->nlabels);
}

/* ---- registration -------------------------------------------------------- */

metrics_registry_t *metrics_registry_new(void)
{
	return xcalloc(1, sizeof(metrics_registry_t));
}

static void metrics_family_free(metrics_family_t *f)
{
	for (size_t i = 0; i < f->slots_cap; i++) {
		if (f->slots[i] != NULL)
			metrics_child_free(f, f->slots[i]);
	}
	free(f->slots);
	free(f->sorted);
	for (size_t l = 0; l < f->nlabels; l++)
		free(f->labels[l]);
	free(f->bounds);
	free(f->name);
	free(f->help);
	/* f is the first member of the counter, gauge or histogram allocated. */
	free(f);
}

void metrics_registry_free(metrics_registry_t *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nfamilies; i++)
		metrics_family_free(r->families[i]);
	free(r->families);
	free(r);
}

/* The series names a family puts in the exposition: 1 or 3 of them. */
static size_t metrics_series_names(const metrics_family_t *f, char **out)
{
	if (f->kind != METRICS_HISTOGRAM) {
		out[0] = xstrdup(f->name);
		return 1;
	}
	out[0] = xasprintf("%s_bucket", f->name);
	out[1] = xasprintf("%s_sum", f->name);
	out[2] = xasprintf("%s_count", f->name);
	return 3;
}

/*
 * Two families clash when their names are equal or any series names are
 * ("x_count" the counter against the histogram "x"): scrapers would see
 * one series twice.
 */
static bool metrics_families_clash(const metrics_family_t *a, const metrics_family_t *b)
{
	if (strcmp(a->name, b->name) == 0)
		return true;
	char *na[3], *nb[3];
	size_t ca = metrics_series_names(a, na);
	size_t cb = metrics_series_names(b, nb);
	bool clash = false;
	for (size_t i = 0; i < ca; i++) {
		for (size_t j = 0; j < cb; j++)
			clash = clash || strcmp(na[i], nb[j]) == 0;
	}
	for (size_t i = 0; i < ca; i++)
		free(na[i]);
	for (size_t j = 0; j < cb; j++)
		free(nb[j]);
	return clash;
}

static void metrics_family_init(metrics_family_t *f, metrics_kind_t kind, const char *name,
	const char *help, va_list ap)
{
	if (!metrics_valid_name(name, true))
		metrics_die("invalid metric name \"%s\": must match [a-zA-Z_:][a-zA-Z0-9_:]*", name ? name : "(null)");
	if (help == NULL || *help == '\0')
		metrics_die("%s: help text must not be empty", name);
	f->kind = kind;
	for (;;) {
		const char *label = va_arg(ap, const char *);
		if (label == NULL)
			break;
		if (f->nlabels == METRICS_MAX_LABELS)
			metrics_die("%s: more than %d labels", name, METRICS_MAX_LABELS);
		if (!metrics_valid_name(label, false))
			metrics_die("%s: invalid label name \"%s\": must match [a-zA-Z_][a-zA-Z0-9_]*", name, label);
		if (label[0] == '_' && label[1] == '_')
			metrics_die("%s: label name \"%s\" is reserved: names starting with __ are internal", name, label);
		if (kind == METRICS_HISTOGRAM && strcmp(label, "le") == 0)
			metrics_die("%s: label name \"le\" is reserved in histograms", name);
		for (size_t l = 0; l < f->nlabels; l++) {
			if (strcmp(f->labels[l], label) == 0)
				metrics_die("%s: label name \"%s\" given twice", name, label);
		}
		f->labels[f->nlabels++] = xstrdup(label);
	}
	f->name = xstrdup(name);
	f->help = xstrdup(help);
	f->slots_cap = METRICS_MIN_SLOTS;
	f->slots = xcalloc(f->slots_cap, sizeof(*f->slots));
}

/* Checks for clashes, inserts f in name order and creates the only child of an unlabelled family. */
static void metrics_register(metrics_registry_t *r, metrics_family_t *f)
{
	size_t pos = 0;
	for (size_t i = 0; i < r->nfamilies; i++) {
		if (metrics_families_clash(r->families[i], f))
			metrics_die("%s: clashes with the registered metric %s", f->name, r->families[i]->name);
		if (strcmp(r->families[i]->name, f->name) < 0)
			pos = i + 1;
	}
	if (r->nfamilies == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->families = xrealloc(r->families, r->cap * sizeof(*r->families));
	}
	memmove(&r->families[pos + 1], &r->families[pos], (r->nfamilies - pos) * sizeof(*r->families));
	r->families[pos] = f;
	r->nfamilies++;
	if (f->nlabels == 0)
		metrics_child_get(f, NULL);
}

metrics_counter_t *metrics_counter_new(metrics_registry_t *r, const char *name, const char *help, ...)
{
	metrics_counter_t *c = xcalloc(1, sizeof(*c));
	va_list ap;
	va_start(ap, help);
	metrics_family_init(&c->family, METRICS_COUNTER, name, help, ap);
	va_end(ap);
	metrics_register(r, &c->family);
	return c;
}

metrics_gauge_t *metrics_gauge_new(metrics_registry_t *r, const char *name, const char *help, ...)
{
	metrics_gauge_t *g = xcalloc(1, sizeof(*g));
	va_list ap;
	va_start(ap, help);
	metrics_family_init(&g->family, METRICS_GAUGE, name, help, ap);
	va_end(ap);
	metrics_register(r, &g->family);
	return g;
}

metrics_histogram_t *metrics_histogram_new(metrics_registry_t *r, const char *name, const char *help,
	const double *buckets, size_t nbuckets, ...)
{
	metrics_histogram_t *h = xcalloc(1, sizeof(*h));
	metrics_family_t *f = &h->family;
	va_list ap;
	va_start(ap, nbuckets);
	metrics_family_init(f, METRICS_HISTOGRAM, name, help, ap);
	va_end(ap);
	if (buckets == NULL) {
		buckets = metrics_default_buckets;
		nbuckets = METRICS_DEFAULT_BUCKETS_COUNT;
	}
	if (nbuckets > 0 && isinf(buckets[nbuckets - 1]) && buckets[nbuckets - 1] > 0)
		nbuckets--; /* +Inf is always there */
	f->bounds = xmalloc((nbuckets ? nbuckets : 1) * sizeof(*f->bounds));
	for (size_t i = 0; i < nbuckets; i++) {
		if (!isfinite(buckets[i]))
			metrics_die("%s: bucket %zu is not a finite number", name, i);
		if (i > 0 && !(buckets[i] > buckets[i - 1]))
			metrics_die("%s: buckets must be strictly increasing (bucket %zu)", name, i);
		f->bounds[i] = buckets[i];
	}
	f->nbounds = nbuckets;
	metrics_register(r, f);
	return h;
}

/* ---- updates ------------------------------------------------------------- */

/*
 * Each public update reads its label values into an array on the stack and
 * finds the child through the family's hash table. The va_list handling is
 * repeated in each because a va_list cannot be forwarded before va_start.
 */
#define METRICS_CHILD(f, last, out)                                  \
	do {                                                         \
		const char *values_[METRICS_MAX_LABELS];             \
		va_list ap_;                                         \
		va_start(ap_, last);                                 \
		metrics_collect_values((f), ap_, values_);           \
		va_end(ap_);                                         \
		(out) = metrics_child_get((f), values_);             \
	} while (0)

#define METRICS_CHILD_LOOKUP(f, last, out)                           \
	do {                                                         \
		const char *values_[METRICS_MAX_LABELS];             \
		va_list ap_;                                         \
		va_start(ap_, last);                                 \
		metrics_collect_values((f), ap_, values_);           \
		va_end(ap_);                                         \
		(out) = metrics_child_lookup((f), values_);          \
	} while (0)

#define METRICS_CHILD_REMOVE(f, last, out)                           \
	do {                                                         \
		const char *values_[METRICS_MAX_LABELS];             \
		va_list ap_;                                         \
		va_start(ap_, last);                                 \
		metrics_collect_values((f), ap_, values_);           \
		va_end(ap_);                                         \
		(out) = metrics_child_remove((f), values_);          \
	} while (0)

void metrics_counter_add(metrics_counter_t *c, double value, ...)
{
	if (!(value >= 0))
		metrics_die("%s: counters only go up, cannot add %g", c->family.name, value);
	metrics_child_t *child;
	METRICS_CHILD(&c->family, value, child);
	child->value += value;
}

void metrics_counter_inc(metrics_counter_t *c, ...)
{
	metrics_child_t *child;
	METRICS_CHILD(&c->family, c, child);
	child->value += 1;
}

void metrics_gauge_set(metrics_gauge_t *g, double value, ...)
{
	metrics_child_t *child;
	METRICS_CHILD(&g->family, value, child);
	child->value = value;
}

void metrics_gauge_add(metrics_gauge_t *g, double value, ...)
{
	metrics_child_t *child;
	METRICS_CHILD(&g->family, value, child);
	child->value += value;
}

void metrics_gauge_set_fn(metrics_gauge_t *g, metrics_gauge_fn fn, void *data, ...)
{
	metrics_child_t *child;
	METRICS_CHILD(&g->family, data, child);
	child->fn = fn;
	child->fn_data = fn ? data : NULL;
}

void metrics_histogram_observe(metrics_histogram_t *h, double value, ...)
{
	metrics_child_t *child;
	METRICS_CHILD(&h->family, value, child);
	const metrics_family_t *f = &h->family;
	size_t lo = 0, hi = f->nbounds;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (value <= f->bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	child->buckets[lo]++;
	child->count++;
	child->sum += value;
}

int metrics_counter_remove(metrics_counter_t *c, ...)
{
	int rc;
	METRICS_CHILD_REMOVE(&c->family, c, rc);
	return rc;
}

int metrics_gauge_remove(metrics_gauge_t *g, ...)
{
	int rc;
	METRICS_CHILD_REMOVE(&g->family, g, rc);
	return rc;
}

static double metrics_child_gauge_value(const metrics_child_t *child)
{
	return child->fn ? child->fn(child->fn_data) : child->value;
}

double metrics_counter_value(const metrics_counter_t *c, ...)
{
	const metrics_child_t *child;
	METRICS_CHILD_LOOKUP(&c->family, c, child);
	return child ? child->value : 0;
}

double metrics_gauge_value(const metrics_gauge_t *g, ...)
{
	const metrics_child_t *child;
	METRICS_CHILD_LOOKUP(&g->family, g, child);
	return child ? metrics_child_gauge_value(child) : 0;
}

uint64_t metrics_histogram_count(const metrics_histogram_t *h, ...)
{
	const metrics_child_t *child;
	METRICS_CHILD_LOOKUP(&h->family, h, child);
	return child ? child->count : 0;
}

double metrics_histogram_sum(const metrics_histogram_t *h, ...)
{
	const metrics_child_t *child;
	METRICS_CHILD_LOOKUP(&h->family, h, child);
	return child ? child->sum : 0;
}

/* ---- rendering ----------------------------------------------------------- */

/*
 * Shortest of %.15g, %.16g, %.17g that reads back as the same double, so 0.1
 * prints as 0.1 and every value survives the trip through a scraper.
 * Integral values below 1e21 print in full, without an exponent, as large
 * counters are easier to read that way and still parse exactly.
 */
size_t metrics_format_value(double value, char *out, size_t outlen)
{
	const char *fixed = NULL;
	if (isnan(value))
		fixed = "NaN";
	else if (isinf(value))
		fixed = value > 0 ? "+Inf" : "-Inf";
	else if (value == 0)
		fixed = "0"; /* and -0 */
	if (fixed != NULL)
		return (size_t)snprintf(out, outlen, "%s", fixed);
	/* Without libm: every double of magnitude 2^53 or more is an integer. */
	double magnitude = value < 0 ? -value : value;
	if (magnitude < 1e21 && (magnitude >= 9007199254740992.0 || value == (double)(long long)value))
		return (size_t)snprintf(out, outlen, "%.0f", value);
	int n = 0;
	for (int precision = 15; precision <= 17; precision++) {
		n = snprintf(out, outlen, "%.*g", precision, value);
		if (strtod(out, NULL) == value)
			break;
	}
	return (size_t)n;
}

static void metrics_buf_escaped(buf_t *b, const char *s, bool quote)
{
	const char *run = s;
	for (; *s != '\0'; s++) {
		const char *esc = NULL;
		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (*s == '"' && quote)
			esc = "\\\"";
		if (esc == NULL)
			continue;
		buf_append(b, run, (size_t)(s - run));
		buf_puts(b, esc);
		run = s + 1;
	}
	buf_append(b, run, (size_t)(s - run));
}

static void metrics_buf_value(buf_t *b, double value)
{
	char num[40];
	size_t n = metrics_format_value(value, num, sizeof(num));
	buf_append(b, num, n);
}

/* name{l1="v1",...,le="0.5"} value */
static void metrics_render_sample(buf_t *b, const metrics_family_t *f, const char *suffix,
	const metrics_child_t *c, const double *le, double value)
{
	buf_puts(b, f->name);
	buf_puts(b, suffix);
	if (f->nlabels > 0 || le != NULL) {
		buf_puts(b, "{");
		for (size_t l = 0; l < f->nlabels; l++) {
			if (l > 0)
				buf_puts(b, ",");
			buf_puts(b, f->labels[l]);
			buf_puts(b, "=\"");
			metrics_buf_escaped(b, c->values[l], true);
			buf_puts(b, "\"");
		}
		if (le != NULL) {
			buf_puts(b, f->nlabels > 0 ? ",le=\"" : "le=\"");
			metrics_buf_value(b, *le);
			buf_puts(b, "\"");
		}
		buf_puts(b, "}");
	}
	buf_puts(b, " ");
	metrics_buf_value(b, value);
	buf_puts(b, "\n");
}

static void metrics_render_family(buf_t *b, const metrics_family_t *f)
{
	if (f->nchildren == 0)
		return;
	buf_puts(b, "# HELP ");
	buf_puts(b, f->name);
	buf_puts(b, " ");
	metrics_buf_escaped(b, f->help, false);
	buf_puts(b, "\n# TYPE ");
	buf_puts(b, f->name);
	buf_puts(b, " ");
	buf_puts(b, metrics_kind_names[f->kind]);
	buf_puts(b, "\n");
	for (size_t i = 0; i < f->nchildren && !b->full; i++) {
		const metrics_child_t *c = f->sorted[i];
		switch (f->kind) {
		case METRICS_COUNTER:
			metrics_render_sample(b, f, "", c, NULL, c->value);
			break;
		case METRICS_GAUGE:
			metrics_render_sample(b, f, "", c, NULL, metrics_child_gauge_value(c));
			break;
		case METRICS_HISTOGRAM: {
			uint64_t cumulative = 0;
			for (size_t k = 0; k < f->nbounds; k++) {
				cumulative += c->buckets[k];
				metrics_render_sample(b, f, "_bucket", c, &f->bounds[k], (double)cumulative);
			}
			const double inf = INFINITY;
			metrics_render_sample(b, f, "_bucket", c, &inf, (double)c->count);
			metrics_render_sample(b, f, "_sum", c, NULL, c->sum);
			metrics_render_sample(b, f, "_count", c, NULL, (double)c->count);
			break;
		}
		}
	}
}

char *metrics_render(metrics_registry_t *r, size_t *len)
{
	buf_t b;
	buf_init(&b, METRICS_RENDER_MAX);
	buf_append(&b, "", 0); /* an empty registry renders as "" */
	for (size_t i = 0; i < r->nfamilies && !b.full; i++)
		metrics_render_family(&b, r->families[i]);
	if (b.full) {
		char cap[32];
		snprintf(cap, sizeof(cap), "%zu", METRICS_RENDER_MAX);
		log_error("metrics exposition too large, not rendered", "max_bytes", cap);
		free(b.data);
		*len = 0;
		return NULL;
	}
	*len = b.len;
	return b.data;
}
