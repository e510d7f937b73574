/*
 * kubectl drashift report PLAN [-o FILE]: the migration as one HTML file.
 *
 * It reads the plan and its history (reconcilers/history.h: the ConfigMap
 * drashift-system/drashift-history-<plan> the operator keeps) and writes a
 * page with everything inline (CSS and SVG; no script, no font, no image to
 * fetch), so it opens anywhere, offline, and can be mailed or attached to a
 * ticket:
 *
 *   - a timeline: a lane per pool (its phases) and under it a lane per node
 *     (its handover steps), coloured by state, with the freezes as red bands
 *     from the breach to its acknowledgement;
 *   - each pool's SLO signals over time against their thresholds;
 *   - DRA against legacy on each pool: jobs placed, failed, success rate,
 *     retries, time to allocation and to Ready, idle and fragmented devices.
 *
 * Lanes carry data-lane="pool:NAME" or "node:NAME" so a test can find them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "history.h"
#include "kube_api.h"
#include "plan.h"
#include "rfc3339.h"
#include "strmap.h"
#include "xalloc.h"

/* Page geometry, in CSS pixels. */
#define REPORT_WIDTH 1180
#define REPORT_LABEL 170
#define REPORT_LANE 16
#define REPORT_POOL_LANE 22
#define REPORT_GAP 3
#define REPORT_CHART_W 360
#define REPORT_CHART_H 120

/* ---- output helpers ------------------------------------------------------------ */

/* Text for HTML, escaped. */
static void report_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *report_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double report_num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int64_t report_time_of(const cJSON *rec)
{
	return (int64_t)report_num(rec, "t");
}

/* A duration for people: 850ms, 12.5s, 4m05s, 2h10m. */
static void report_duration(double ms, char *buf, size_t len)
{
	if (ms < 1000)
		snprintf(buf, len, "%.0fms", ms);
	else if (ms < 60000)
		snprintf(buf, len, "%.1fs", ms / 1000);
	else if (ms < 3600000)
		snprintf(buf, len, "%dm%02ds", (int)(ms / 60000), (int)(ms / 1000) % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)(ms / 3600000), (int)(ms / 60000) % 60);
}

static void report_time(int64_t ms, char *buf, size_t len)
{
	if (rfc3339_format(ms * 1000, 0, buf, len) != 0)
		snprintf(buf, len, "?");
}

/* State colours: steps of a node, phases of a pool. */
static const char *const report_colors[][2] = {
	{ "legacy", "#b0b7bf" },	  { "draining", "#ffb74d" },	  { "plugin-off", "#ffe082" },
	{ "driver-on", "#4fc3f7" },	  { "verified", "#4db6ac" },	  { "dra", "#43a047" },
	{ "draining-dra", "#ce93d8" },	  { "driver-off", "#b39ddb" },	  { "plugin-on", "#9fa8da" },
	{ "verified-legacy", "#80cbc4" }, { "failed", "#e53935" },	  { "Legacy", "#b0b7bf" },
	{ "Canary", "#ffca28" },	  { "Expanding", "#29b6f6" },	  { "DRA", "#43a047" },
	{ "Paused", "#8d99a6" },	  { "Frozen", "#1e63c8" },	  { "RollingBack", "#ab47bc" },
	{ "Failed", "#e53935" },
};
#define REPORT_N_COLORS (sizeof(report_colors) / sizeof(report_colors[0]))
#define REPORT_FIRST_PHASE 11

static const char *report_color(const char *state)
{
	for (size_t i = 0; state && i < REPORT_N_COLORS; i++)
		if (strcmp(report_colors[i][0], state) == 0)
			return report_colors[i][1];
	return "#ffffff";
}

/* ---- the timeline's data --------------------------------------------------------- */

typedef struct {
	int64_t t;
	const char *state;
} report_point_t;

typedef struct {
	bool pool; /* a pool's lane (phases), or a node's (steps) */
	const char *name;
	const char *pool_name;
	size_t rank; /* its pool's place in r->pools: lanes are drawn in that order */
	report_point_t *points;
	size_t n;
} report_lane_t;

typedef struct {
	int64_t from, to;
	const char *pool, *signal, *value, *threshold, *breach;
	bool acknowledged;
} report_freeze_t;

typedef struct {
	const cJSON *plan;
	history_data_t hist;
	bool have_history;
	int64_t t0, t1, now;
	report_lane_t *lanes;
	size_t n_lanes;
	report_freeze_t *freezes;
	size_t n_freezes;
	const char **pools; /* in the plan's order, then any the history adds */
	size_t n_pools;
	/* Lookups, so that a history of many lanes or pools is read in linear time: key -> index + 1. */
	strmap_t lane_index, pool_index, freeze_index;
	/* The samples sorted by pool (in r->pools' order), then time: pool p's are [sample_from[p], sample_to[p]). */
	size_t *sample_from, *sample_to;
} report_t;

static int report_cmp_t(const void *a, const void *b)
{
	int64_t x = report_time_of(*(cJSON *const *)a), y = report_time_of(*(cJSON *const *)b);
	return (x > y) - (x < y);
}

static report_lane_t *report_lane(report_t *r, bool pool, const char *name, const char *pool_name)
{
	char *key = xasprintf("%c%s", pool ? 'p' : 'n', name);
	uintptr_t at = (uintptr_t)strmap_get(&r->lane_index, key);
	if (at == 0) {
		r->lanes = xrealloc(r->lanes, (r->n_lanes + 1) * sizeof(*r->lanes));
		r->lanes[r->n_lanes++] = (report_lane_t){ .pool = pool, .name = name, .pool_name = pool_name };
		at = r->n_lanes;
		strmap_put(&r->lane_index, key, (void *)at);
	}
	free(key);
	return &r->lanes[at - 1];
}

static void report_lane_add(report_lane_t *l, int64_t t, const char *state)
{
	l->points = xrealloc(l->points, (l->n + 1) * sizeof(*l->points));
	l->points[l->n++] = (report_point_t){ t, state };
}

static void report_add_pool(report_t *r, const char *name)
{
	if (strmap_get(&r->pool_index, name) != NULL)
		return;
	r->pools = xrealloc(r->pools, (r->n_pools + 1) * sizeof(char *));
	r->pools[r->n_pools++] = name;
	strmap_put(&r->pool_index, name, (void *)(uintptr_t)r->n_pools);
}

typedef struct {
	cJSON *sample;
	size_t pool;
} report_ranked_t;

static int report_cmp_ranked(const void *a, const void *b)
{
	const report_ranked_t *x = a, *y = b;
	if (x->pool != y->pool)
		return x->pool < y->pool ? -1 : 1;
	return report_cmp_t(&x->sample, &y->sample);
}

/* Samples grouped by pool (each pool's in time order), and each pool's range. */
static void report_group_samples(report_t *r)
{
	size_t n = r->hist.n_samples;
	report_ranked_t *ranked = xcalloc(n + 1, sizeof(*ranked));
	for (size_t i = 0; i < n; i++) {
		const char *pool = report_str(r->hist.samples[i], "pool");
		uintptr_t at = pool ? (uintptr_t)strmap_get(&r->pool_index, pool) : 0;
		ranked[i] = (report_ranked_t){ r->hist.samples[i], at ? at - 1 : r->n_pools };
	}
	if (n > 1)
		qsort(ranked, n, sizeof(*ranked), report_cmp_ranked);
	r->sample_from = xcalloc(r->n_pools + 1, sizeof(size_t));
	r->sample_to = xcalloc(r->n_pools + 1, sizeof(size_t));
	for (size_t i = n; i-- > 0;) {
		r->hist.samples[i] = ranked[i].sample;
		r->sample_from[ranked[i].pool] = i;
	}
	for (size_t i = 0; i < n; i++)
		r->sample_to[ranked[i].pool] = i + 1;
	free(ranked);
}

/* Lanes and freezes from the transitions, in time order; the span of the whole history. */
static void report_build(report_t *r)
{
	const cJSON *pool;
	cJSON_ArrayForEach(pool, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r->plan, "spec"), "pools"))
	{
		if (report_str(pool, "name"))
			report_add_pool(r, report_str(pool, "name"));
	}
	history_data_t *h = &r->hist;
	if (h->n_transitions > 1)
		qsort(h->transitions, h->n_transitions, sizeof(cJSON *), report_cmp_t);
	int64_t first = INT64_MAX, last = 0;
	for (size_t i = 0; i < h->n_transitions; i++) {
		const cJSON *rec = h->transitions[i];
		int64_t t = report_time_of(rec);
		first = t < first ? t : first;
		last = t > last ? t : last;
		const char *kind = report_str(rec, "kind"), *to = report_str(rec, "to"), *p = report_str(rec, "pool");
		if (kind == NULL)
			continue;
		bool is_pool = strcmp(kind, "pool") == 0, is_node = strcmp(kind, "node") == 0;
		const char *name = is_pool ? p : report_str(rec, "node");
		if ((is_pool || is_node) && name && to && p) {
			report_add_pool(r, p);
			report_lane_t *l = report_lane(r, is_pool, name, p);
			const char *from = report_str(rec, "from");
			if (l->n == 0 && from)
				report_lane_add(l, INT64_MIN, from); /* it was there before the history began */
			report_lane_add(l, t, to);
		} else if (strcmp(kind, "freeze") == 0) {
			r->freezes = xrealloc(r->freezes, (r->n_freezes + 1) * sizeof(*r->freezes));
			r->freezes[r->n_freezes++] = (report_freeze_t){
				.from = t, .to = INT64_MAX, .pool = report_str(rec, "pool"), .signal = report_str(rec, "signal"),
				.value = report_str(rec, "value"), .threshold = report_str(rec, "threshold"),
				.breach = report_str(rec, "breach"),
			};
			if (r->freezes[r->n_freezes - 1].breach)
				strmap_put(&r->freeze_index, r->freezes[r->n_freezes - 1].breach, (void *)(uintptr_t)r->n_freezes);
		} else if (strcmp(kind, "acknowledge") == 0) {
			const char *id = report_str(rec, "breach");
			uintptr_t at = id ? (uintptr_t)strmap_get(&r->freeze_index, id) : 0;
			if (at && !r->freezes[at - 1].acknowledged) {
				r->freezes[at - 1].to = t;
				r->freezes[at - 1].acknowledged = true;
			}
		}
	}
	for (size_t i = 0; i < h->n_samples; i++) {
		int64_t t = report_time_of(h->samples[i]);
		first = t < first ? t : first;
		last = t > last ? t : last;
		if (report_str(h->samples[i], "pool"))
			report_add_pool(r, report_str(h->samples[i], "pool"));
	}
	report_group_samples(r);
	if (first == INT64_MAX)
		first = last = r->now;
	/* The states now run on to the report's time, unless the history ended long before it. */
	int64_t tail = (last - first) / 10 > 10000 ? (last - first) / 10 : 10000;
	r->t0 = first;
	r->t1 = r->now < last + tail ? (r->now > last ? r->now : last + 1) : last + tail;
	for (size_t f = 0; f < r->n_freezes; f++)
		if (r->freezes[f].to > r->t1)
			r->freezes[f].to = r->t1;
}

static void report_free(report_t *r)
{
	for (size_t i = 0; i < r->n_lanes; i++)
		free(r->lanes[i].points);
	free(r->lanes);
	free(r->freezes);
	free(r->pools);
	free(r->sample_from);
	free(r->sample_to);
	strmap_clear(&r->lane_index, NULL);
	strmap_clear(&r->pool_index, NULL);
	strmap_clear(&r->freeze_index, NULL);
	history_data_free(&r->hist);
}

/* ---- drawing ---------------------------------------------------------------------- */

static double report_x(const report_t *r, int64_t t, double x0, double width)
{
	if (t <= r->t0)
		return x0;
	if (t >= r->t1)
		return x0 + width;
	return x0 + width * (double)(t - r->t0) / (double)(r->t1 - r->t0);
}

/* A tick step of at most about max_ticks ticks over span ms. */
static int64_t report_tick(int64_t span, int max_ticks)
{
	static const int64_t steps[] = { 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000,
					 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= max_ticks)
			return steps[i];
	return span / max_ticks + 1;
}

/* Time ticks (minutes:seconds since the history began) and the grid lines across height. */
static void report_axis(FILE *f, const report_t *r, double x0, double width, double y, double height, int max_ticks)
{
	int64_t step = report_tick(r->t1 - r->t0, max_ticks);
	for (int64_t t = 0; r->t0 + t <= r->t1; t += step) {
		double x = report_x(r, r->t0 + t, x0, width);
		char label[32];
		if (step >= 3600000)
			snprintf(label, sizeof(label), "%" PRId64 "h", t / 3600000);
		else
			snprintf(label, sizeof(label), "%" PRId64 ":%02" PRId64, t / 60000, (t / 1000) % 60);
		fprintf(f, "<line x1='%.1f' y1='0' x2='%.1f' y2='%.1f' class='grid'/>", x, x, y + height);
		fprintf(f, "<text x='%.1f' y='%.1f' class='tick'>%s</text>\n", x, y + height + 12, label);
	}
}

static void report_freeze_bands(FILE *f, const report_t *r, double x0, double width, double height)
{
	for (size_t i = 0; i < r->n_freezes; i++) {
		const report_freeze_t *fr = &r->freezes[i];
		double a = report_x(r, fr->from, x0, width), b = report_x(r, fr->to, x0, width);
		fprintf(f, "<rect class='freeze' x='%.1f' y='0' width='%.1f' height='%.1f'><title>frozen: ", a,
			b - a < 1 ? 1 : b - a, height);
		report_esc(f, fr->signal);
		fputs(" ", f);
		report_esc(f, fr->value);
		fputs(" &gt; ", f);
		report_esc(f, fr->threshold);
		fputs(fr->acknowledged ? " (acknowledged)" : " (not acknowledged)", f);
		fputs("</title></rect>\n", f);
	}
}

static void report_lane_svg(FILE *f, const report_t *r, const report_lane_t *l, double y, double h)
{
	double x0 = REPORT_LABEL, width = REPORT_WIDTH - REPORT_LABEL - 20;
	fprintf(f, "<g class='lane' data-lane='%s:", l->pool ? "pool" : "node");
	report_esc(f, l->name);
	fprintf(f, "'><text x='%d' y='%.1f' class='%s'>", REPORT_LABEL - 6, y + h - 4, l->pool ? "lpool" : "lnode");
	if (l->pool)
		fputs("pool ", f);
	report_esc(f, l->name);
	fputs("</text>", f);
	for (size_t i = 0; i < l->n; i++) {
		int64_t from = l->points[i].t, to = i + 1 < l->n ? l->points[i + 1].t : r->t1;
		double a = report_x(r, from, x0, width), b = report_x(r, to, x0, width);
		fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>", a, y,
			b - a < 0.5 ? 0.5 : b - a, h, report_color(l->points[i].state));
		report_esc(f, l->name);
		fputs(": ", f);
		report_esc(f, l->points[i].state);
		char d[32];
		if (from != INT64_MIN) {
			report_duration((double)(to - from), d, sizeof(d));
			fprintf(f, " for %s", d);
		}
		fputs("</title></rect>", f);
		/* Name the state inside its segment when there is room. */
		if (b - a > 7.0 * (double)strlen(l->points[i].state) + 8) {
			fprintf(f, "<text x='%.1f' y='%.1f' class='seg'>", a + 4, y + h - 4);
			report_esc(f, l->points[i].state);
			fputs("</text>", f);
		}
	}
	fputs("</g>\n", f);
}

/* Per pool in order: its own lane, then its nodes by name. */
static int report_lane_cmp(const void *a, const void *b)
{
	const report_lane_t *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->pool != y->pool)
		return x->pool ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void report_timeline(FILE *f, report_t *r)
{
	size_t n = r->n_lanes;
	report_lane_t *order = xcalloc(n + 1, sizeof(*order));
	double height = 0;
	for (size_t i = 0; i < n; i++) {
		order[i] = r->lanes[i];
		order[i].rank = (uintptr_t)strmap_get(&r->pool_index, order[i].pool_name);
	}
	if (n > 1)
		qsort(order, n, sizeof(*order), report_lane_cmp);
	for (size_t i = 0; i < n; i++)
		height += (order[i].pool ? REPORT_POOL_LANE + 8 : REPORT_LANE) + REPORT_GAP;
	double x0 = REPORT_LABEL, width = REPORT_WIDTH - REPORT_LABEL - 20;
	fprintf(f, "<svg class='timeline' width='%d' height='%.0f' viewBox='0 0 %d %.0f'>\n", REPORT_WIDTH, height + 20,
		REPORT_WIDTH, height + 20);
	report_axis(f, r, x0, width, 0, height, 12);
	double y = 0;
	for (size_t i = 0; i < n; i++) {
		if (order[i].pool)
			y += 8;
		double h = order[i].pool ? REPORT_POOL_LANE : REPORT_LANE;
		report_lane_svg(f, r, &order[i], y, h);
		y += h + REPORT_GAP;
	}
	report_freeze_bands(f, r, x0, width, height);
	fputs("</svg>\n", f);
	/* The legend: the states that occur, node steps and pool phases apart. */
	for (int group = 0; group < 2; group++) {
		fputs(group == 0 ? "<p class='legend'><b>node steps</b> " : "<p class='legend'><b>pool phases</b> ", f);
		for (size_t c = group == 0 ? 0 : REPORT_FIRST_PHASE; c < (group == 0 ? REPORT_FIRST_PHASE : REPORT_N_COLORS); c++) {
			bool seen = false;
			for (size_t i = 0; i < n && !seen; i++)
				for (size_t k = 0; k < order[i].n && !seen; k++)
					seen = order[i].pool == (group == 1) && strcmp(order[i].points[k].state, report_colors[c][0]) == 0;
			if (seen)
				fprintf(f, "<span><i style='background:%s'></i>%s</span>", report_colors[c][1], report_colors[c][0]);
		}
		if (group == 1 && r->n_freezes > 0)
			fputs("<span><i class='freezekey'></i>frozen (breach to acknowledgement)</span>", f);
		fputs("</p>\n", f);
	}
	free(order);
}

/* The largest value and the last threshold of a pool's signal k over the samples. */
static void report_signal_range(const report_t *r, size_t p, size_t k, double *max, double *threshold)
{
	*max = *threshold = 0;
	for (size_t i = r->sample_from[p]; i < r->sample_to[p]; i++) {
		const cJSON *s = r->hist.samples[i];
		const cJSON *sig = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "signals"), (int)k);
		if (cJSON_GetArraySize(sig) < 6)
			continue;
		double v = cJSON_GetArrayItem(sig, 1)->valuedouble;
		*max = v > *max ? v : *max;
		*threshold = cJSON_GetArrayItem(sig, 2)->valuedouble;
	}
}

/* One signal of one pool over time: the value, the threshold, the freezes. */
static void report_signal_chart(FILE *f, const report_t *r, size_t p, size_t k, const char *name)
{
	double max = 0;
	const char *unit = "";
	size_t points = 0;
	for (size_t i = r->sample_from[p]; i < r->sample_to[p]; i++) {
		const cJSON *s = r->hist.samples[i];
		const cJSON *sig = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "signals"), (int)k);
		if (cJSON_GetArraySize(sig) < 6)
			continue;
		double v = cJSON_GetArrayItem(sig, 1)->valuedouble, th = cJSON_GetArrayItem(sig, 2)->valuedouble;
		max = v > max ? v : max;
		max = th > max ? th : max;
		if (cJSON_IsString(cJSON_GetArrayItem(sig, 5)))
			unit = cJSON_GetArrayItem(sig, 5)->valuestring;
		points++;
	}
	bool seconds = strcmp(unit, "ms") == 0 && max >= 1000;
	double scale = max > 0 ? max * 1.15 : 1;
	double x0 = 44, width = REPORT_CHART_W - 54, h = REPORT_CHART_H - 36;
	fprintf(f, "<figure class='chart' data-signal='");
	report_esc(f, name);
	fputs("'><figcaption>", f);
	report_esc(f, name);
	fprintf(f, "%s%s%s</figcaption>\n<svg width='%d' height='%d' viewBox='0 0 %d %d'>", unit[0] ? " (" : "",
		seconds ? "s" : unit, unit[0] ? ")" : "", REPORT_CHART_W, REPORT_CHART_H, REPORT_CHART_W, REPORT_CHART_H);
	fprintf(f, "<g transform='translate(0,8)'>");
	report_freeze_bands(f, r, x0, width, h);
	fprintf(f, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' class='axis'/>", x0, h, x0 + width, h);
	for (int q = 0; q <= 2; q++) {
		double v = scale * q / 2, y = h - h * q / 2;
		fprintf(f, "<text x='%.0f' y='%.1f' class='ytick'>%.3g</text>", x0 - 4, y + 4, seconds ? v / 1000 : v);
	}
	/* The threshold as a stepped dashed line, the value as a line with dots coloured by verdict. */
	for (int pass = 0; pass < 2; pass++) {
		fprintf(f, "<polyline class='%s' points='", pass == 0 ? "threshold" : "value");
		double last_y = -1;
		for (size_t i = r->sample_from[p]; i < r->sample_to[p]; i++) {
			const cJSON *s = r->hist.samples[i];
			const cJSON *sig = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "signals"), (int)k);
			if (cJSON_GetArraySize(sig) < 6)
				continue;
			double v = cJSON_GetArrayItem(sig, pass == 0 ? 2 : 1)->valuedouble;
			double x = report_x(r, report_time_of(s), x0, width), y = h - h * v / scale;
			if (pass == 0 && last_y >= 0)
				fprintf(f, "%.1f,%.1f ", x, last_y);
			fprintf(f, "%.1f,%.1f ", x, y);
			last_y = y;
		}
		fputs("'/>", f);
	}
	for (size_t i = r->sample_from[p]; i < r->sample_to[p]; i++) {
		const cJSON *s = r->hist.samples[i];
		const cJSON *sig = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "signals"), (int)k);
		if (cJSON_GetArraySize(sig) < 6)
			continue;
		const cJSON *verdict = cJSON_GetArrayItem(sig, 4);
		const char *vd = cJSON_IsString(verdict) ? verdict->valuestring : "";
		double v = cJSON_GetArrayItem(sig, 1)->valuedouble;
		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2' class='v%s'/>", report_x(r, report_time_of(s), x0, width),
			h - h * v / scale, vd);
	}
	fprintf(f, "<text x='%.0f' y='%.0f' class='ytick'>%zu samples</text>", x0 + width, h + 14, points);
	fputs("</g></svg></figure>\n", f);
}

static void report_signals(FILE *f, const report_t *r)
{
	for (size_t p = 0; p < r->n_pools; p++) {
		/* The signal names, from the pool's first sample. */
		const cJSON *names = NULL;
		if (r->sample_from[p] < r->sample_to[p])
			names = cJSON_GetObjectItemCaseSensitive(r->hist.samples[r->sample_from[p]], "signals");
		fputs("<h3>pool ", f);
		report_esc(f, r->pools[p]);
		fputs("</h3>\n", f);
		if (names == NULL) {
			fputs("<p class='note'>No samples yet: the pool has not been judged.</p>\n", f);
			continue;
		}
		/* Latencies and percentages as charts; counts as one table row each, charted only once they move. */
		fputs("<div class='charts'>\n", f);
		bool *counted = xcalloc((size_t)cJSON_GetArraySize(names) + 1, sizeof(bool));
		for (int k = 0; k < cJSON_GetArraySize(names); k++) {
			const cJSON *sig = cJSON_GetArrayItem(names, k);
			const cJSON *name = cJSON_GetArrayItem(sig, 0), *unit = cJSON_GetArrayItem(sig, 5);
			if (!cJSON_IsString(name))
				continue;
			double max = 0, threshold = 0;
			report_signal_range(r, p, (size_t)k, &max, &threshold);
			counted[k] = cJSON_IsString(unit) && unit->valuestring[0] == '\0' && max <= 0;
			if (!counted[k])
				report_signal_chart(f, r, p, (size_t)k, name->valuestring);
		}
		fputs("</div>\n<table class='counts'><tr>", f);
		for (int k = 0; k < cJSON_GetArraySize(names); k++) {
			const cJSON *name = cJSON_GetArrayItem(cJSON_GetArrayItem(names, k), 0);
			double max = 0, threshold = 0;
			if (!counted[k] || !cJSON_IsString(name))
				continue;
			report_signal_range(r, p, (size_t)k, &max, &threshold);
			fputs("<td data-signal='", f);
			report_esc(f, name->valuestring);
			fputs("'>", f);
			report_esc(f, name->valuestring);
			fprintf(f, ": <b>0</b> throughout <small>(allowed %.0f)</small></td>", threshold);
		}
		fputs("</tr></table>\n", f);
		free(counted);
	}
}

/* Mean idle and fragmented devices of a path over a pool's samples. */
static void report_devices(const report_t *r, size_t p, const char *path, double *idle, double *fragmented)
{
	size_t n = 0;
	*idle = *fragmented = 0;
	for (size_t i = r->sample_from[p]; i < r->sample_to[p]; i++) {
		const cJSON *s = r->hist.samples[i];
		const cJSON *pair = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "devices"), path);
		if (cJSON_GetArraySize(pair) != 2)
			continue;
		*idle += cJSON_GetArrayItem(pair, 0)->valuedouble;
		*fragmented += cJSON_GetArrayItem(pair, 1)->valuedouble;
		n++;
	}
	if (n > 0) {
		*idle /= (double)n;
		*fragmented /= (double)n;
	}
}

static void report_latency_cell(FILE *f, const cJSON *c, const char *what)
{
	char sum[32], count[32], max[32], a[32], b[32];
	snprintf(sum, sizeof(sum), "%sMsSum", what);
	snprintf(count, sizeof(count), "%sCount", what);
	snprintf(max, sizeof(max), "%sMsMax", what);
	double n = report_num(c, count);
	if (n <= 0) {
		fputs("<td class='na'>-</td>", f);
		return;
	}
	report_duration(report_num(c, sum) / n, a, sizeof(a));
	report_duration(report_num(c, max), b, sizeof(b));
	fprintf(f, "<td>%s <small>(max %s)</small></td>", a, b);
}

static void report_comparison(FILE *f, const report_t *r)
{
	const cJSON *cmp = r->hist.comparison;
	const cJSON *pools = cJSON_GetObjectItemCaseSensitive(cmp, "pools");
	fputs("<table class='cmp'><thead><tr><th>pool</th><th>path</th><th>jobs placed</th><th>failed on a node</th>"
	      "<th>success rate</th><th>retries</th><th>time to allocation</th><th>time to Ready</th>"
	      "<th>idle devices</th><th>fragmented devices</th></tr></thead><tbody>\n",
	      f);
	for (size_t p = 0; p < r->n_pools; p++)
		for (int path = 0; path < HISTORY_PATHS; path++) {
			const char *pn = history_path_name((history_path_t)path);
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pools, r->pools[p]), pn);
			double placed = report_num(c, "placed"), failed = report_num(c, "failed");
			double idle, frag;
			report_devices(r, p, pn, &idle, &frag);
			fprintf(f, "<tr class='%s' data-row='", pn);
			report_esc(f, r->pools[p]);
			fprintf(f, ":%s'><td>", pn);
			report_esc(f, r->pools[p]);
			fprintf(f, "</td><td>%s</td><td>%.0f</td><td>%.0f</td>", path == HISTORY_PATH_DRA ? "DRA" : "device plugin",
				placed, failed);
			if (placed + failed > 0)
				fprintf(f, "<td>%.1f%%</td>", 100 * placed / (placed + failed));
			else
				fputs("<td class='na'>-</td>", f);
			fprintf(f, "<td>%.0f</td>", report_num(c, "retries"));
			report_latency_cell(f, c, "alloc");
			report_latency_cell(f, c, "ready");
			fprintf(f, "<td>%.1f</td><td>%.1f</td></tr>\n", idle, frag);
		}
	fputs("</tbody></table>\n", f);
	const cJSON *unplaced = cJSON_GetObjectItemCaseSensitive(cmp, "unplaced");
	fprintf(f,
		"<p class='note'>Jobs that waited unschedulable and ended without a node (no pool to charge them to): "
		"%.0f through the device plugin, %.0f through DRA. Times are from the pods' own conditions (whole "
		"seconds): creation to PodScheduled, PodScheduled to Ready. Idle devices sit on nodes where nothing "
		"runs, fragmented ones on nodes partly in use; both are means over the samples.</p>\n",
		report_num(unplaced, "legacy"), report_num(unplaced, "dra"));
}

static void report_freeze_list(FILE *f, const report_t *r)
{
	if (r->n_freezes == 0) {
		fputs("<p class='note'>No SLO breach froze the plan.</p>\n", f);
		return;
	}
	fputs("<ul class='freezes'>\n", f);
	for (size_t i = 0; i < r->n_freezes; i++) {
		const report_freeze_t *fr = &r->freezes[i];
		char at[40], held[32];
		report_time(fr->from, at, sizeof(at));
		report_duration((double)(fr->to - fr->from), held, sizeof(held));
		fprintf(f, "<li>%s: pool ", at);
		report_esc(f, fr->pool);
		fputs(", ", f);
		report_esc(f, fr->signal);
		fputs(" measured ", f);
		report_esc(f, fr->value);
		fputs(" against ", f);
		report_esc(f, fr->threshold);
		fprintf(f, "; %s after %s (breach <code>", fr->acknowledged ? "acknowledged" : "still frozen", held);
		report_esc(f, fr->breach);
		fputs("</code>)</li>\n", f);
	}
	fputs("</ul>\n", f);
}

static const char report_css[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d2733;background:#fff}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde3ea}"
	"h3{font-size:14px;margin:14px 0 4px}.sub{color:#5a6b7d;margin:0 0 12px}"
	".facts span{display:inline-block;margin:0 18px 6px 0}.facts b{font-weight:600}"
	"svg text{font:11px system-ui,sans-serif;fill:#1d2733}.lpool{font-weight:700;font-size:12px;text-anchor:end}"
	".lnode{text-anchor:end}.seg{font-size:10px;fill:#1d2733}.tick{fill:#5a6b7d;font-size:10px;text-anchor:middle}"
	".ytick{fill:#5a6b7d;font-size:10px;text-anchor:end}.grid{stroke:#eef1f4}.axis{stroke:#9aa7b4}"
	".freeze{fill:#e53935;fill-opacity:.14;stroke:#e53935;stroke-opacity:.5}"
	".legend span{display:inline-block;margin-right:12px;font-size:12px}"
	".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;border:1px solid #0002}"
	".freezekey{background:#e5393524;border-color:#e53935!important}"
	".charts{display:flex;flex-wrap:wrap;gap:6px 14px}.chart{margin:0}"
	".chart figcaption{font-size:12px;font-weight:600;margin-left:44px}"
	".threshold{fill:none;stroke:#e53935;stroke-dasharray:5 3;stroke-width:1.5}"
	".value{fill:none;stroke:#1e63c8;stroke-width:1.5}.vPass{fill:#43a047}.vBreach{fill:#e53935}"
	".vInconclusive{fill:#9aa7b4}.vNotJudged{fill:#cfd6dd}"
	".cmp{border-collapse:collapse;font-size:13px}.cmp th,.cmp td{border:1px solid #dde3ea;padding:4px 8px;text-align:right}"
	".cmp th{background:#f3f6f9}.cmp td:first-child,.cmp td:nth-child(2),.cmp th:nth-child(-n+2){text-align:left}"
	".cmp tr.dra td:nth-child(2){color:#2e7d32;font-weight:600}.na{color:#9aa7b4}"
	".note{color:#5a6b7d;font-size:12px;max-width:1100px}code{font-size:12px}"
	".pools td{padding:2px 12px 2px 0;font-size:13px}.pools i{display:inline-block;width:10px;height:10px;margin-right:5px}"
	".activity{white-space:pre-line;background:#f3f6f9;border-left:3px solid #1e63c8;padding:6px 10px;max-width:1100px}"
	".counts td{font-size:12px;padding:2px 18px 2px 0;color:#3c4b5c}.legend b{margin-right:8px;font-size:12px}";

static void report_html(FILE *f, report_t *r, const char *name)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(r->plan, "status");
	char now[40], start[40];
	report_time(r->now, now, sizeof(now));
	report_time(r->t0, start, sizeof(start));
	fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
	      "<meta name='viewport' content='width=device-width'><title>drashift report: ",
	      f);
	report_esc(f, name);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>Migration report: ", report_css);
	report_esc(f, name);
	fprintf(f, "</h1><p class='sub'>drashift, written %s; the history starts %s (times on the axes are minutes:seconds "
		   "since then)</p>\n<p class='facts'>",
		now, start);
	static const char *const facts[][2] = { { "phase", "phase" }, { "pools on DRA", "poolsOnDRA" }, { "nodes on DRA", "nodesOnDRA" } };
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		fprintf(f, "<span>%s: <b>", facts[i][0]);
		report_esc(f, report_str(status, facts[i][1]) ? report_str(status, facts[i][1]) : "-");
		fputs("</b></span>", f);
	}
	const cJSON *frozen = cJSON_GetObjectItemCaseSensitive(status, "frozen");
	fprintf(f, "<span>frozen: <b>%s</b></span></p>\n", cJSON_IsTrue(frozen) ? "yes" : "no");
	if (report_str(status, "activity")) {
		fputs("<p class='activity'>", f);
		report_esc(f, report_str(status, "activity"));
		fputs("</p>\n", f);
	}
	fputs("<table class='pools'>", f);
	const cJSON *pool;
	cJSON_ArrayForEach(pool, cJSON_GetObjectItemCaseSensitive(status, "pools"))
	{
		fputs("<tr><td>pool <b>", f);
		report_esc(f, report_str(pool, "name"));
		fprintf(f, "</b></td><td><i style='background:%s'></i>", report_color(report_str(pool, "phase")));
		report_esc(f, report_str(pool, "phase"));
		fputs("</td><td>", f);
		report_esc(f, report_str(pool, "message"));
		fputs("</td></tr>", f);
	}
	fputs("</table>\n", f);
	if (!r->have_history)
		fputs("<p class='note'>drashift has recorded no history for this plan yet (the ConfigMap "
		      "drashift-system/drashift-history-PLAN appears once the leader has reconciled it).</p>\n",
		      f);
	else if (r->hist.dropped > 0) {
		fprintf(f, "<p class='note'>%zu records of the history could not be read and are left out (first: ", r->hist.dropped);
		report_esc(f, r->hist.problem);
		fputs(").</p>\n", f);
	}
	fputs("<h2>Timeline: pools and their nodes</h2>\n", f);
	report_timeline(f, r);
	fputs("<h2>Freezes</h2>\n", f);
	report_freeze_list(f, r);
	fputs("<h2>SLO signals against their thresholds</h2>\n<p class='note'>Blue: the measured value; red dashes: the "
	      "plan's threshold; dots: the verdict (green pass, red breach, grey too few samples or not judged).</p>\n",
	      f);
	report_signals(f, r);
	fputs("<h2>DRA against the device plugin, per pool</h2>\n", f);
	report_comparison(f, r);
	fputs("</body></html>\n", f);
}

int cli_verb_report(struct cli *c, int argc, char **argv)
{
	static const struct option long_opts[] = { { "output", required_argument, NULL, 'o' }, { NULL, 0, NULL, 0 } };
	const char *output = "-";
	int opt;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "o:", long_opts, NULL)) != -1) {
		if (opt == 'o')
			output = optarg;
		else
			return cli_usage_error(c, "unknown flag %s", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return cli_usage_error(c, argc - optind < 1 ? "missing argument" : "too many arguments");
	const char *name = argv[optind];
	report_t r = { .now = (int64_t)time(NULL) * 1000, .lane_index = STRMAP_INIT, .pool_index = STRMAP_INIT,
		       .freeze_index = STRMAP_INIT };
	cJSON *plan = cli_get_plan(c, name);
	if (plan == NULL)
		return 1;
	r.plan = plan;
	char *cm_name = plan_child_name(HISTORY_NAME_PREFIX, name);
	char *path = kube_path("v1", "configmaps", HISTORY_NAMESPACE, cm_name, NULL);
	free(cm_name);
	bool not_found = false;
	cJSON *cm = cli_get_json(c, path, &not_found);
	free(path);
	if (cm == NULL && !not_found) {
		cJSON_Delete(plan);
		return 1;
	}
	char err[256];
	if (cm != NULL) {
		if (history_decode(cm, &r.hist, err, sizeof(err)) != 0) {
			cJSON_Delete(cm);
			cJSON_Delete(plan);
			return cli_fail(c, "configmap %s/%s%s: %s", HISTORY_NAMESPACE, HISTORY_NAME_PREFIX, name, err);
		}
		r.have_history = true;
	}
	report_build(&r);
	FILE *f = strcmp(output, "-") == 0 ? c->out : fopen(output, "w");
	int rc = 0;
	if (f == NULL) {
		rc = cli_fail(c, "%s: cannot write: %s", output, strerror(errno));
	} else {
		report_html(f, &r, name);
		if (f != c->out && fclose(f) != 0)
			rc = cli_fail(c, "%s: cannot write: %s", output, strerror(errno));
		else if (f != c->out)
			fprintf(c->err, "wrote %s: %zu lanes, %zu samples, %zu freezes\n", output, r.n_lanes, r.hist.n_samples,
				r.n_freezes);
	}
	report_free(&r);
	cJSON_Delete(cm);
	cJSON_Delete(plan);
	return rc;
}
