#include "slo_tracker.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "strmap.h"
#include "xalloc.h"

/* Age-based eviction runs at most this often: a full pass over the records. */
#define SLO_TRACKER_SWEEP_MS 60000

/* What the last pod observed for a claim was doing. */
typedef enum {
	SLO_TRACKER_POD_NONE,      /* no pod seen */
	SLO_TRACKER_POD_WAITING,   /* not Ready, not finished */
	SLO_TRACKER_POD_READY,
	SLO_TRACKER_POD_SUCCEEDED, /* ran to completion: its devices were served */
	SLO_TRACKER_POD_GONE,      /* Failed, or being deleted */
} slo_tracker_pod_state_t;

typedef struct {
	char *uid; /* NULL: a placeholder, only a pod has named this claim so far */
	char *key; /* namespace/name */
	size_t index; /* in slo_tracker.records */
	int64_t created_ms;
	int64_t allocated_ms;
	int64_t ready_ms;
	int64_t ended_ms;
	bool latency_unknown;
	bool unallocatable;
	bool waiting_ready;  /* not Ready since allocation */
	bool ready_done;     /* readiness after allocation settled: measured, or not measurable */
	bool device_condition_false;
	bool deleted;
	slo_tracker_pod_state_t pod;
	/* In the tracker's pool of names (slo_tracker.names): compared by address. */
	const char *node;
	const char **drivers;
	size_t n_drivers;
	const char **classes;
	size_t n_classes;
} slo_tracker_record_t;

/*
 * The records by creation time, for building views: sorted again when a
 * build finds it stale (a record went or changed its creation time). Records
 * added since the last build are the tail of slo_tracker.records (a removal
 * would have made it stale), and a few are each put in their place: most
 * often the end, as claims come newest last.
 */
typedef struct {
	slo_tracker_record_t **sorted;
	size_t n, cap;
	bool stale;
} slo_tracker_order_t;

struct slo_tracker {
	slo_tracker_record_t **records; /* owns every record */
	size_t n_records, cap_records;
	strmap_t by_uid;  /* uid -> record: claims, deleted ones too */
	strmap_t by_name; /* namespace/name -> record: the live incarnation, or a placeholder */
	/* The node, driver and class names records hold, once each (strmap_intern): thousands of
	 * claims repeat a few, and a query compares them by address, not by strcmp. */
	strmap_t names;
	int64_t max_window_ms; /* the longest window a query asked about; 0: none yet, no age eviction */
	slo_tracker_order_t order;
	int64_t last_now_ms;
	int64_t last_sweep_ms;
	slo_tracker_view_t **views; /* told of every record that changes */
	size_t n_views;
	uint64_t view_builds;
};

/* A view's pool: its samples by creation time, each beside the record it was taken from. */
typedef struct {
	slo_sample_t *samples;
	const slo_tracker_record_t **recs;
	size_t n, cap;
} slo_tracker_view_pool_t;

/* A view's list of changed records grows to this, or to the tracker's record count if more; beyond, it is built again. */
#define SLO_TRACKER_VIEW_DIRTY_MIN 1024

struct slo_tracker_view {
	slo_tracker_t *t;
	bool built;
	/* The query the samples were sorted into pools for (copies). */
	char *driver;
	char **classes;
	size_t n_classes;
	uint64_t members_version;
	slo_tracker_view_pool_t *pools;
	size_t n_pools;
	/* Records changed since the last query, in the order observed (a record may recur). */
	const slo_tracker_record_t **dirty;
	size_t n_dirty, cap_dirty;
};

/* Forget a view's samples: the next query builds them again. It holds no record pointer after this. */
static void slo_tracker_view_reset(slo_tracker_view_t *v)
{
	v->built = false;
	v->n_dirty = 0;
	for (size_t p = 0; p < v->n_pools; p++)
		v->pools[p].n = 0;
}

slo_tracker_t *slo_tracker_new(void)
{
	slo_tracker_t *t = xcalloc(1, sizeof(*t));
	t->by_uid = (strmap_t)STRMAP_INIT;
	t->by_name = (strmap_t)STRMAP_INIT;
	t->names = (strmap_t)STRMAP_INIT;
	return t;
}

static void slo_tracker_free_names(slo_tracker_t *t, const char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strmap_unintern(&t->names, v[i]);
	free(v);
}

static void slo_tracker_record_free(slo_tracker_t *t, slo_tracker_record_t *r)
{
	free(r->uid);
	free(r->key);
	if (r->node)
		strmap_unintern(&t->names, r->node);
	slo_tracker_free_names(t, r->drivers, r->n_drivers);
	slo_tracker_free_names(t, r->classes, r->n_classes);
	free(r);
}

void slo_tracker_free(slo_tracker_t *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n_records; i++)
		slo_tracker_record_free(t, t->records[i]);
	free(t->records);
	strmap_clear(&t->by_uid, NULL);
	strmap_clear(&t->by_name, NULL);
	strmap_clear(&t->names, NULL); /* empty by now: every record gave its names back */
	free(t->order.sorted);
	free(t->views); /* empty: every view was freed first */
	free(t);
}

size_t slo_tracker_size(const slo_tracker_t *t)
{
	return t->n_records;
}

/* ---- records ---------------------------------------------------------------- */

static void slo_tracker_record_remove(slo_tracker_t *t, slo_tracker_record_t *r)
{
	if (r->uid && strmap_get(&t->by_uid, r->uid) == r)
		strmap_remove(&t->by_uid, r->uid);
	if (strmap_get(&t->by_name, r->key) == r)
		strmap_remove(&t->by_name, r->key);
	size_t last = --t->n_records;
	if (r->index != last) {
		t->records[r->index] = t->records[last];
		t->records[r->index]->index = r->index;
	}
	t->order.stale = true;
	/* Removals come in batches (the minute's age sweep, the cap): each view is built once, not edited per record. */
	for (size_t i = 0; i < t->n_views; i++)
		slo_tracker_view_reset(t->views[i]);
	slo_tracker_record_free(t, r);
}

static int slo_tracker_compare_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/*
 * At the cap, drop the oldest eighth by creation time in one go, so a
 * tracker that stays full pays one sort per n/8 insertions rather than a scan
 * per insertion. The oldest are the least likely to be in anyone's window.
 */
static void slo_tracker_evict_oldest(slo_tracker_t *t)
{
	size_t n = t->n_records, want = n / 8 ? n / 8 : 1;
	int64_t *created = xmalloc(n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		created[i] = t->records[i]->created_ms;
	qsort(created, n, sizeof(int64_t), slo_tracker_compare_int64);
	int64_t cut = created[want - 1];
	free(created);
	size_t below = 0;
	for (size_t i = 0; i < n; i++)
		below += t->records[i]->created_ms < cut;
	/* Everything strictly older goes; of those created exactly at the cut, only enough to reach want. */
	size_t at_cut_quota = want - below, removed = 0;
	for (size_t i = t->n_records; i-- > 0;) {
		slo_tracker_record_t *r = t->records[i];
		bool go = r->created_ms < cut;
		if (!go && r->created_ms == cut && at_cut_quota > 0) {
			at_cut_quota--;
			go = true;
		}
		if (go) {
			slo_tracker_record_remove(t, r);
			removed++;
		}
	}
	char count[32], oldest[32];
	snprintf(count, sizeof(count), "%zu", removed);
	snprintf(oldest, sizeof(oldest), "%lld", (long long)cut);
	log_warn("slo tracker full: dropped the oldest claim observations", "dropped", count, "created_ms_upto", oldest);
}

static slo_tracker_record_t *slo_tracker_record_new(slo_tracker_t *t, const char *key, const char *uid,
						    int64_t created_ms)
{
	if (t->n_records >= SLO_TRACKER_MAX_CLAIMS)
		slo_tracker_evict_oldest(t);
	if (t->n_records == t->cap_records) {
		t->cap_records = t->cap_records ? t->cap_records * 2 : 64;
		t->records = xrealloc(t->records, t->cap_records * sizeof(*t->records));
	}
	slo_tracker_record_t *r = xcalloc(1, sizeof(*r));
	r->key = xstrdup(key);
	r->uid = uid ? xstrdup(uid) : NULL;
	r->created_ms = created_ms;
	r->index = t->n_records;
	t->records[t->n_records++] = r; /* the order takes it in at the next build */
	if (uid)
		strmap_put(&t->by_uid, uid, r);
	/* A newer incarnation under the same name takes the name; the older one stays by uid. */
	strmap_put(&t->by_name, key, r);
	return r;
}

/* The oldest creation time still worth recording; INT64_MIN until someone asked for a window. */
static int64_t slo_tracker_horizon(const slo_tracker_t *t, int64_t now_ms)
{
	int64_t w = t->max_window_ms;
	if (w <= 0 || w > INT64_MAX / 2 || now_ms < INT64_MIN + 2 * w)
		return INT64_MIN;
	return now_ms - 2 * w;
}

static void slo_tracker_tick(slo_tracker_t *t, int64_t now_ms)
{
	if (now_ms > t->last_now_ms)
		t->last_now_ms = now_ms;
	if (t->max_window_ms <= 0 || now_ms - t->last_sweep_ms < SLO_TRACKER_SWEEP_MS)
		return;
	t->last_sweep_ms = now_ms;
	int64_t horizon = slo_tracker_horizon(t, now_ms);
	for (size_t i = t->n_records; i-- > 0;)
		if (t->records[i]->created_ms < horizon)
			slo_tracker_record_remove(t, t->records[i]);
}

/* namespace/name in buf, or in fresh memory (*heap, to free) when it does not fit. */
static const char *slo_tracker_key(char *buf, size_t len, const char *ns, const char *name, char **heap)
{
	*heap = NULL;
	int n = snprintf(buf, len, "%s/%s", ns ? ns : "", name);
	if (n >= 0 && (size_t)n < len)
		return buf;
	*heap = xasprintf("%s/%s", ns ? ns : "", name);
	return *heap;
}

/* *v becomes the distinct names of src, from the tracker's pool. */
static void slo_tracker_replace_names(slo_tracker_t *t, const char ***v, size_t *n, char *const *src, size_t n_src)
{
	const char **old = *v;
	size_t n_old = *n;
	*v = NULL;
	*n = 0;
	if (n_src > 0) {
		*v = xcalloc(n_src, sizeof(char *));
		for (size_t i = 0; i < n_src; i++) {
			bool dup = src[i] == NULL;
			for (size_t j = 0; j < *n && !dup; j++)
				dup = strcmp((*v)[j], src[i]) == 0;
			if (!dup)
				(*v)[(*n)++] = strmap_intern(&t->names, src[i]);
		}
	}
	slo_tracker_free_names(t, old, n_old); /* after: a name kept is not freed and copied again */
}

/* ---- what views are told ------------------------------------------------------- */

/* r changed (or is new): each view takes it up at its next query. */
static void slo_tracker_touch(slo_tracker_t *t, const slo_tracker_record_t *r)
{
	for (size_t i = 0; i < t->n_views; i++) {
		slo_tracker_view_t *v = t->views[i];
		if (!v->built || (v->n_dirty > 0 && v->dirty[v->n_dirty - 1] == r))
			continue;
		/* A view nobody queries (a plan left invalid) is built again rather than let its list grow. */
		if (v->n_dirty >= SLO_TRACKER_VIEW_DIRTY_MIN && v->n_dirty >= t->n_records) {
			slo_tracker_view_reset(v);
			continue;
		}
		if (v->n_dirty == v->cap_dirty) {
			v->cap_dirty = v->cap_dirty ? 2 * v->cap_dirty : 64;
			v->dirty = xrealloc(v->dirty, v->cap_dirty * sizeof(*v->dirty));
		}
		v->dirty[v->n_dirty++] = r;
	}
}

/* The first of a view pool's samples created at or after ms (strictly after: after). */
static size_t slo_tracker_view_bound(const slo_tracker_view_pool_t *p, int64_t ms, bool after)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->samples[mid].created_ms < ms || (after && p->samples[mid].created_ms == ms))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where r is in a view's pool, found by its creation time (unchanged since it went in), or p->n when absent. */
static size_t slo_tracker_view_pool_find(const slo_tracker_view_pool_t *p, const slo_tracker_record_t *r)
{
	for (size_t i = slo_tracker_view_bound(p, r->created_ms, false);
	     i < p->n && p->samples[i].created_ms == r->created_ms; i++)
		if (p->recs[i] == r)
			return i;
	return p->n;
}

static void slo_tracker_view_pool_remove_at(slo_tracker_view_pool_t *p, size_t i)
{
	memmove(&p->samples[i], &p->samples[i + 1], (p->n - i - 1) * sizeof(*p->samples));
	memmove(&p->recs[i], &p->recs[i + 1], (p->n - i - 1) * sizeof(*p->recs));
	p->n--;
}

/* r's creation time is about to change: out of every view first, while it can still be found. */
static void slo_tracker_views_drop(slo_tracker_t *t, const slo_tracker_record_t *r)
{
	for (size_t i = 0; i < t->n_views; i++)
		for (size_t p = 0; p < t->views[i]->n_pools; p++) {
			slo_tracker_view_pool_t *vp = &t->views[i]->pools[p];
			size_t at = slo_tracker_view_pool_find(vp, r);
			if (at < vp->n)
				slo_tracker_view_pool_remove_at(vp, at);
		}
}

/* ---- observations ------------------------------------------------------------ */

/* API seconds to ms, saturating: a corrupt timestamp must not overflow. */
static int64_t slo_tracker_seconds_to_ms(int64_t s)
{
	if (s > INT64_MAX / 1000)
		return INT64_MAX;
	if (s < INT64_MIN / 1000)
		return INT64_MIN;
	return s * 1000;
}

/* The claim is first seen allocated: settle what the pod already told about the ready wait. */
static void slo_tracker_record_allocated(slo_tracker_record_t *r, bool first_sight, int64_t now_ms)
{
	r->allocated_ms = now_ms;
	r->latency_unknown = first_sight;
	r->ended_ms = 0; /* the wait for allocation is over; a wait for Ready may start */
	switch (r->pod) {
	case SLO_TRACKER_POD_WAITING:
		r->waiting_ready = true;
		break;
	case SLO_TRACKER_POD_READY:
		/*
		 * The pod watch ran ahead of the claim watch: Ready came before the
		 * allocation was seen, so there is no honest ready latency to take.
		 */
		r->ready_done = true;
		break;
	default:
		break;
	}
}

void slo_tracker_observe_claim(slo_tracker_t *t, const projection_claim_t *claim, const char *uid_if_deleted,
			       int64_t now_ms)
{
	slo_tracker_tick(t, now_ms);
	if (claim == NULL) {
		slo_tracker_record_t *r = uid_if_deleted ? strmap_get(&t->by_uid, uid_if_deleted) : NULL;
		if (r == NULL || r->deleted)
			return;
		r->deleted = true;
		slo_tracker_touch(t, r);
		if (r->ended_ms == 0)
			r->ended_ms = now_ms;
		if (strmap_get(&t->by_name, r->key) == r)
			strmap_remove(&t->by_name, r->key);
		return;
	}
	const char *uid = claim->meta.uid;
	if (uid == NULL || claim->meta.name == NULL)
		return;
	int64_t created_ms = slo_tracker_seconds_to_ms(claim->meta.created);
	bool first_sight = false;
	slo_tracker_record_t *r = strmap_get(&t->by_uid, uid);
	if (r == NULL) {
		if (created_ms < slo_tracker_horizon(t, now_ms))
			return; /* older than any window: it would be evicted at once */
		char buf[320], *heap;
		const char *key = slo_tracker_key(buf, sizeof(buf), claim->meta.namespace, claim->meta.name, &heap);
		r = strmap_get(&t->by_name, key);
		if (r != NULL && r->uid == NULL) {
			r->uid = xstrdup(uid); /* adopt the placeholder a pod left */
			strmap_put(&t->by_uid, uid, r);
		} else {
			r = slo_tracker_record_new(t, key, uid, created_ms);
		}
		free(heap);
		first_sight = true;
	}
	if (r->deleted)
		return; /* a late update for an incarnation already deleted */
	slo_tracker_touch(t, r); /* read at the views' next query: what follows may still change it */
	if (r->created_ms != created_ms) {
		slo_tracker_views_drop(t, r);
		r->created_ms = created_ms;
		t->order.stale = true;
	}
	slo_tracker_replace_names(t, &r->classes, &r->n_classes, claim->device_classes, claim->n_device_classes);
	if (claim->device_conditions_false > 0)
		r->device_condition_false = true; /* trouble seen inside the window stays seen */
	if (!claim->allocated)
		return;
	if (claim->node_name && (r->node == NULL || strcmp(r->node, claim->node_name) != 0)) {
		if (r->node)
			strmap_unintern(&t->names, r->node);
		r->node = strmap_intern(&t->names, claim->node_name);
	}
	if (claim->n_results > 0) {
		char **drivers = xcalloc(claim->n_results, sizeof(char *));
		for (size_t i = 0; i < claim->n_results; i++)
			drivers[i] = claim->results[i].driver;
		slo_tracker_replace_names(t, &r->drivers, &r->n_drivers, drivers, claim->n_results);
		free(drivers);
	}
	/* One sample per claim: a claim deallocated and allocated again keeps its first allocation. */
	if (r->allocated_ms == 0)
		slo_tracker_record_allocated(r, first_sight, now_ms);
}

static slo_tracker_pod_state_t slo_tracker_pod_state(const projection_pod_t *pod)
{
	if (pod->meta.deleting || pod->phase == PROJECTION_POD_FAILED)
		return SLO_TRACKER_POD_GONE;
	if (pod->phase == PROJECTION_POD_SUCCEEDED)
		return SLO_TRACKER_POD_SUCCEEDED;
	return pod->ready ? SLO_TRACKER_POD_READY : SLO_TRACKER_POD_WAITING;
}

static void slo_tracker_record_pod(slo_tracker_record_t *r, slo_tracker_pod_state_t state, bool unschedulable,
				   int64_t now_ms)
{
	r->pod = state;
	bool left = state == SLO_TRACKER_POD_GONE || state == SLO_TRACKER_POD_SUCCEEDED;
	if (r->allocated_ms == 0) {
		if (unschedulable)
			r->unallocatable = true;
		if (left && r->ended_ms == 0)
			r->ended_ms = now_ms;
		else if (!left && !r->deleted)
			r->ended_ms = 0; /* a pod waits again (a shared claim's next user) */
		return;
	}
	switch (state) {
	case SLO_TRACKER_POD_READY:
		if (!r->ready_done) {
			r->ready_done = true;
			r->ready_ms = now_ms;
		}
		r->waiting_ready = false;
		break;
	case SLO_TRACKER_POD_WAITING:
		if (!r->ready_done) {
			r->waiting_ready = true;
			r->ended_ms = 0;
		}
		break;
	case SLO_TRACKER_POD_SUCCEEDED:
		r->waiting_ready = false; /* it ran to completion: the devices were prepared */
		break;
	case SLO_TRACKER_POD_GONE:
		/* Keep the wait: a pod deleted after a long stuck prepare is still a driver error. */
		if (r->waiting_ready && r->ended_ms == 0)
			r->ended_ms = now_ms;
		break;
	default:
		break;
	}
}

void slo_tracker_observe_pod(slo_tracker_t *t, const projection_pod_t *pod, int64_t now_ms)
{
	slo_tracker_tick(t, now_ms);
	if (pod->n_claims == 0)
		return;
	slo_tracker_pod_state_t state = slo_tracker_pod_state(pod);
	bool unschedulable = pod->phase == PROJECTION_POD_PENDING && !pod->meta.deleting && pod->unschedulable;
	for (size_t i = 0; i < pod->n_claims; i++) {
		char buf[320], *heap;
		const char *key = slo_tracker_key(buf, sizeof(buf), pod->meta.namespace, pod->claims[i], &heap);
		slo_tracker_record_t *r = strmap_get(&t->by_name, key);
		int64_t pod_created_ms = slo_tracker_seconds_to_ms(pod->meta.created);
		if (r == NULL && state != SLO_TRACKER_POD_GONE && state != SLO_TRACKER_POD_SUCCEEDED &&
		    pod_created_ms >= slo_tracker_horizon(t, now_ms))
			r = slo_tracker_record_new(t, key, NULL, pod_created_ms);
		free(heap);
		if (r != NULL) {
			slo_tracker_touch(t, r);
			slo_tracker_record_pod(r, state, unschedulable, now_ms);
		}
	}
}

/* ---- samples -------------------------------------------------------------------- */

static bool slo_tracker_in(const char *s, const char *const *set, size_t n)
{
	if (s == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		if (set[i] && strcmp(s, set[i]) == 0)
			return true;
	return false;
}

/* Whether name, from the tracker's pool of names, is in set (the pool's copies, NULL for a name it lacks). */
static bool slo_tracker_has(const char *name, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] != NULL && set[i] == name)
			return true;
	return false;
}

/*
 * A query's classes and driver as the tracker's own copies (NULL for a name
 * no record holds), so that records are told apart by address.
 */
typedef struct {
	const char **classes;
	size_t n_classes;
	bool by_driver;     /* only allocations with a result from driver count */
	const char *driver; /* NULL: no record names it */
} slo_tracker_query_t;

/* The pool a record is a sample of: a pool number, SLO_TRACKER_EVERY_POOL, or -1 for none. */
#define SLO_TRACKER_EVERY_POOL (-2)

static ptrdiff_t slo_tracker_record_pool(const slo_tracker_record_t *r, const slo_tracker_query_t *q,
					 ptrdiff_t (*pool_of)(const char *node, void *data), void *data)
{
	if (r->uid == NULL)
		return -1; /* a placeholder: the claim itself was never seen */
	bool wants_class = false;
	for (size_t i = 0; i < r->n_classes && !wants_class; i++)
		wants_class = slo_tracker_has(r->classes[i], q->classes, q->n_classes);
	if (!wants_class)
		return -1;
	if (r->allocated_ms == 0)
		return SLO_TRACKER_EVERY_POOL; /* pending: it belongs to the pools whose classes it asks for */
	ptrdiff_t pool = r->node ? pool_of(r->node, data) : -1;
	if (pool < 0)
		return -1;
	if (q->by_driver && r->n_drivers > 0 && !slo_tracker_has(q->driver, r->drivers, r->n_drivers))
		return -1;
	return pool;
}

static int slo_tracker_compare_created(const void *a, const void *b)
{
	int64_t x = (*(slo_tracker_record_t *const *)a)->created_ms, y = (*(slo_tracker_record_t *const *)b)->created_ms;
	return (x > y) - (x < y);
}

/* Records added between two builds that are put in their places rather than sorted with the rest. */
#define SLO_TRACKER_ORDER_INSERTS 32

/* The first of the n sorted records created at or after ms (strictly after: after). */
static size_t slo_tracker_bound(slo_tracker_record_t *const *sorted, size_t n, int64_t ms, bool after)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid]->created_ms < ms || (after && sorted[mid]->created_ms == ms))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The records by creation time, and the first created at since_ms or later. */
static slo_tracker_record_t *const *slo_tracker_ordered(slo_tracker_t *t, int64_t since_ms, size_t *first)
{
	slo_tracker_order_t *o = &t->order;
	if (o->cap < t->n_records) {
		o->cap = t->n_records;
		o->sorted = xrealloc(o->sorted, o->cap * sizeof(*o->sorted));
	}
	/* Many added (a relist, the first sync): one sort costs less than putting each in its place. */
	if (o->stale || o->n > t->n_records || t->n_records - o->n > SLO_TRACKER_ORDER_INSERTS) {
		o->n = t->n_records;
		if (o->n > 0)
			memcpy(o->sorted, t->records, o->n * sizeof(*o->sorted));
		if (o->n > 1)
			qsort(o->sorted, o->n, sizeof(*o->sorted), slo_tracker_compare_created);
		o->stale = false;
	}
	for (; o->n < t->n_records; o->n++) {
		slo_tracker_record_t *r = t->records[o->n];
		size_t at = slo_tracker_bound(o->sorted, o->n, r->created_ms, true);
		memmove(&o->sorted[at + 1], &o->sorted[at], (o->n - at) * sizeof(*o->sorted));
		o->sorted[at] = r;
	}
	*first = slo_tracker_bound(o->sorted, o->n, since_ms, false);
	return o->sorted;
}

/* The sample a record gives. */
static slo_sample_t slo_tracker_sample_of(const slo_tracker_record_t *r)
{
	return (slo_sample_t){
		.created_ms = r->created_ms,
		.allocated_ms = r->allocated_ms,
		.ready_ms = r->ready_ms,
		.latency_unknown = r->latency_unknown,
		.unallocatable = r->unallocatable,
		.not_ready_since_allocation = r->allocated_ms != 0 && r->waiting_ready,
		.device_condition_false = r->device_condition_false,
		.ended_ms = r->ended_ms,
	};
}

/* Keep every record created at since_ms or later: retention widens to twice now - since_ms. */
static void slo_tracker_widen(slo_tracker_t *t, int64_t since_ms)
{
	if (t->last_now_ms <= since_ms)
		return;
	uint64_t span = (uint64_t)t->last_now_ms - (uint64_t)since_ms; /* exact: two's complement */
	int64_t window = span > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)span;
	if (window > t->max_window_ms)
		t->max_window_ms = window;
}

slo_tracker_view_t *slo_tracker_view_new(slo_tracker_t *t)
{
	slo_tracker_view_t *v = xcalloc(1, sizeof(*v));
	v->t = t;
	t->views = xrealloc(t->views, (t->n_views + 1) * sizeof(*t->views));
	t->views[t->n_views++] = v;
	return v;
}

static void slo_tracker_view_forget_query(slo_tracker_view_t *v)
{
	free(v->driver);
	for (size_t i = 0; i < v->n_classes; i++)
		free(v->classes[i]);
	free(v->classes);
	for (size_t p = 0; p < v->n_pools; p++) {
		free(v->pools[p].samples);
		free(v->pools[p].recs);
	}
	free(v->pools);
	v->driver = NULL;
	v->classes = NULL;
	v->pools = NULL;
	v->n_classes = v->n_pools = 0;
}

void slo_tracker_view_free(slo_tracker_view_t *v)
{
	if (v == NULL)
		return;
	slo_tracker_t *t = v->t;
	for (size_t i = 0; i < t->n_views; i++)
		if (t->views[i] == v) {
			t->views[i] = t->views[--t->n_views];
			break;
		}
	slo_tracker_view_forget_query(v);
	free(v->dirty);
	free(v);
}

static bool slo_tracker_same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether the view's samples were sorted for this query. */
static bool slo_tracker_view_same_query(const slo_tracker_view_t *v, const char *driver, const char *const *classes,
					size_t n_classes, size_t n_pools, uint64_t members_version)
{
	if (v->members_version != members_version || v->n_pools != n_pools || v->n_classes != n_classes ||
	    !slo_tracker_same_name(v->driver, driver))
		return false;
	for (size_t i = 0; i < n_classes; i++)
		if (!slo_tracker_same_name(v->classes[i], classes[i]))
			return false;
	return true;
}

static void slo_tracker_view_set_query(slo_tracker_view_t *v, const char *driver, const char *const *classes,
				       size_t n_classes, size_t n_pools, uint64_t members_version)
{
	slo_tracker_view_forget_query(v);
	v->driver = driver ? xstrdup(driver) : NULL;
	v->classes = xcalloc(n_classes + 1, sizeof(char *));
	for (size_t i = 0; i < n_classes; i++)
		v->classes[i] = classes[i] ? xstrdup(classes[i]) : NULL;
	v->n_classes = n_classes;
	v->pools = xcalloc(n_pools + 1, sizeof(*v->pools));
	v->n_pools = n_pools;
	v->members_version = members_version;
	slo_tracker_view_reset(v);
}

/* r into a view's pool, after the samples created at the same time or earlier (at the end, for a build in order). */
static void slo_tracker_view_pool_insert(slo_tracker_view_pool_t *p, const slo_tracker_record_t *r)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->samples = xrealloc(p->samples, p->cap * sizeof(*p->samples));
		p->recs = xrealloc(p->recs, p->cap * sizeof(*p->recs));
	}
	size_t at = p->n > 0 && p->samples[p->n - 1].created_ms > r->created_ms
			    ? slo_tracker_view_bound(p, r->created_ms, true)
			    : p->n;
	memmove(&p->samples[at + 1], &p->samples[at], (p->n - at) * sizeof(*p->samples));
	memmove(&p->recs[at + 1], &p->recs[at], (p->n - at) * sizeof(*p->recs));
	p->samples[at] = slo_tracker_sample_of(r);
	p->recs[at] = r;
	p->n++;
}

/* The pools r is a sample of now: [*from, *to), empty for none, every one while it is pending. */
static void slo_tracker_view_pools_of(const slo_tracker_view_t *v, const slo_tracker_query_t *q,
				      const slo_tracker_record_t *r, ptrdiff_t (*pool_of)(const char *node, void *data),
				      void *data, size_t *from, size_t *to)
{
	ptrdiff_t pool = slo_tracker_record_pool(r, q, pool_of, data);
	*from = pool == SLO_TRACKER_EVERY_POOL || pool < 0 ? 0 : (size_t)pool;
	*to = pool == SLO_TRACKER_EVERY_POOL ? v->n_pools : pool < 0 ? 0 : (size_t)pool + 1;
	if (*to > v->n_pools)
		*to = v->n_pools;
}

/* A changed record in the pools it belongs to now: its sample rewritten where it stays, moved where it changed pools. */
static void slo_tracker_view_update(slo_tracker_view_t *v, const slo_tracker_query_t *q, const slo_tracker_record_t *r,
				    ptrdiff_t (*pool_of)(const char *node, void *data), void *data)
{
	size_t from, to;
	slo_tracker_view_pools_of(v, q, r, pool_of, data, &from, &to);
	for (size_t p = 0; p < v->n_pools; p++) {
		slo_tracker_view_pool_t *vp = &v->pools[p];
		size_t at = slo_tracker_view_pool_find(vp, r);
		bool wanted = p >= from && p < to;
		if (at < vp->n && wanted)
			vp->samples[at] = slo_tracker_sample_of(r);
		else if (at < vp->n)
			slo_tracker_view_pool_remove_at(vp, at);
		else if (wanted)
			slo_tracker_view_pool_insert(vp, r);
	}
}

void slo_tracker_view_samples(slo_tracker_view_t *v, const char *driver, const char *const *device_classes,
			      size_t n_classes, ptrdiff_t (*pool_of)(const char *node, void *data), void *data,
			      size_t n_pools, uint64_t members_version, int64_t since_ms, const slo_sample_t **out,
			      size_t *n_out)
{
	slo_tracker_t *t = v->t;
	slo_tracker_widen(t, since_ms);
	if (!slo_tracker_view_same_query(v, driver, device_classes, n_classes, n_pools, members_version))
		slo_tracker_view_set_query(v, driver, device_classes, n_classes, n_pools, members_version);
	slo_tracker_query_t q = { .classes = xcalloc(n_classes + 1, sizeof(char *)), .n_classes = n_classes,
				  .by_driver = driver != NULL,
				  .driver = driver ? strmap_interned(&t->names, driver) : NULL };
	for (size_t i = 0; i < n_classes; i++)
		q.classes[i] = device_classes[i] ? strmap_interned(&t->names, device_classes[i]) : NULL;
	if (!v->built) {
		size_t first;
		slo_tracker_record_t *const *sorted = slo_tracker_ordered(t, INT64_MIN, &first);
		for (size_t i = first; i < t->n_records; i++) {
			size_t from, to;
			slo_tracker_view_pools_of(v, &q, sorted[i], pool_of, data, &from, &to);
			for (size_t p = from; p < to; p++)
				slo_tracker_view_pool_insert(&v->pools[p], sorted[i]); /* in creation order: at the end */
		}
		v->built = true;
		t->view_builds++;
	} else {
		for (size_t i = 0; i < v->n_dirty; i++)
			slo_tracker_view_update(v, &q, v->dirty[i], pool_of, data);
	}
	v->n_dirty = 0;
	free(q.classes);
	for (size_t p = 0; p < n_pools; p++) {
		size_t first = slo_tracker_view_bound(&v->pools[p], since_ms, false);
		out[p] = v->pools[p].samples + first;
		n_out[p] = v->pools[p].n - first;
	}
}

uint64_t slo_tracker_view_builds(const slo_tracker_t *t)
{
	return t->view_builds;
}

/* slo_tracker_samples' one pool: its list of nodes, scanned. */
typedef struct {
	const char *const *nodes;
	size_t n;
} slo_tracker_list_t;

static ptrdiff_t slo_tracker_listed(const char *node, void *data)
{
	const slo_tracker_list_t *list = data;
	return slo_tracker_in(node, list->nodes, list->n) ? 0 : -1;
}

size_t slo_tracker_samples(slo_tracker_t *t, const char *driver, const char *const *device_classes, size_t n_classes,
			   const char *const *pool_nodes, size_t n_nodes, int64_t since_ms, slo_sample_t **out)
{
	slo_tracker_list_t list = { .nodes = pool_nodes, .n = n_nodes };
	slo_tracker_view_t *v = slo_tracker_view_new(t);
	const slo_sample_t *samples;
	size_t n;
	slo_tracker_view_samples(v, driver, device_classes, n_classes, slo_tracker_listed, &list, 1, 0, since_ms,
				 &samples, &n);
	*out = n > 0 ? xmalloc(n * sizeof(**out)) : NULL;
	if (n > 0)
		memcpy(*out, samples, n * sizeof(**out));
	slo_tracker_view_free(v);
	return n;
}
