/* Maintenance windows; see window.h. */
#include "window.h"

#define WINDOW_DAY 86400
/* A week and a day beyond any daylight saving shift: every window opens and closes within it. */
#define WINDOW_HORIZON (8 * WINDOW_DAY)

static int64_t window__floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static bool window__day(const window_t *w, int64_t day)
{
	int wd = (int)(((day + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
	return (w->days >> wd) & 1;
}

static bool window__open_one(const window_t *w, int64_t t)
{
	int64_t local = t + tz_offset(&w->zone, t);
	int64_t day = window__floor_div(local, WINDOW_DAY);
	int64_t sod = local - day * WINDOW_DAY;
	if (w->start_s < w->end_s)
		return window__day(w, day) && sod >= w->start_s && sod < w->end_s;
	return (window__day(w, day) && sod >= w->start_s) || (window__day(w, day - 1) && sod < w->end_s);
}

bool window_open(const window_t *w, size_t n, int64_t t)
{
	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (window__open_one(&w[i], t))
			return true;
	return false;
}

/*
 * The next instant after t at which this window might open or close: its
 * next local start or end at the offset in force, or the zone's next offset
 * change if that comes first (the local clock jumps there).
 */
static int64_t window__next_boundary(const window_t *w, int64_t t)
{
	int32_t off = tz_offset(&w->zone, t);
	int64_t local = t + off, day = window__floor_div(local, WINDOW_DAY), best = INT64_MAX;
	for (int64_t k = day; k <= day + 1; k++) {
		int64_t c[2] = { k * WINDOW_DAY + w->start_s, k * WINDOW_DAY + w->end_s };
		for (int j = 0; j < 2; j++)
			if (c[j] > local && c[j] - off < best)
				best = c[j] - off;
	}
	int64_t change = tz_next_change(&w->zone, t);
	return change < best ? change : best;
}

int64_t window_next_edge(const window_t *w, size_t n, int64_t t)
{
	if (n == 0)
		return 0;
	bool now = window_open(w, n, t);
	int64_t x = t;
	while (x - t <= WINDOW_HORIZON) {
		int64_t next = INT64_MAX;
		for (size_t i = 0; i < n; i++) {
			int64_t b = window__next_boundary(&w[i], x);
			if (b < next)
				next = b;
		}
		x = next;
		if (window_open(w, n, x) != now)
			return x;
	}
	return 0;
}
