/*
 * Maintenance windows (spec.windows): when handovers may start.
 *
 * A window is a set of weekdays, a start and an end in local time, and an
 * IANA time zone. It opens on each listed day at start and closes at end the
 * same day, or, when end is not after start, the next day (22:00-02:00 opens
 * on Friday evening and closes on Saturday morning). Local times follow the
 * zone's daylight saving: a window from 02:30 on the night clocks spring from
 * 02:00 to 03:00 opens at 03:00; one that starts at 02:30 on the night they
 * fall back opens at the first 02:30.
 *
 * A plan without windows is always open. With several, it is open when any is.
 * Pure: the zones are parsed data (tzif.h) the controller loaded.
 */
#ifndef DRASHIFT_WINDOW_H
#define DRASHIFT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tzif.h"

typedef struct {
	uint8_t days;           /* bit 0 Sunday .. bit 6 Saturday */
	int32_t start_s, end_s; /* seconds after local midnight; end <= start: the window ends the next day */
	char *time_zone;        /* IANA name */
	tz_zone_t zone;         /* loaded by the controller (controller/plan_object.c) */
} window_t;

/* Is any window open at t (UTC seconds)? True when there is none. */
bool window_open(const window_t *w, size_t n, int64_t t);

/*
 * The first instant after t at which window_open() changes: when the
 * windows open next if they are closed at t, when they close if open.
 * 0 when it never changes (no windows, or windows that cover every hour).
 */
int64_t window_next_edge(const window_t *w, size_t n, int64_t t);

#endif
