/*
 * IANA time zones from their compiled form, TZif (RFC 8536), as the system
 * zoneinfo (/usr/share/zoneinfo, Debian's tzdata) holds them.
 *
 * Pure: tz_parse() reads bytes the controller loaded; tz_offset() and
 * tz_next_change() answer from the parsed zone. No localtime_r() and no TZ
 * switching: the process's TZ is global state that libcurl's resolver
 * threads and every log line share, and a maintenance window in Berlin must
 * not depend on what TZ the container was started with.
 *
 * A zone is its transitions (UTC instant -> offset from UTC) and, for the
 * instants after the last one, the footer's POSIX TZ rule ("CET-1CEST,
 * M3.5.0,M10.5.0/3"): "slim" zoneinfo files list few transitions and leave
 * the rest to the rule.
 */
#ifndef DRASHIFT_TZIF_H
#define DRASHIFT_TZIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A POSIX TZ rule date: Mm.w.d (month, week 1..5 with 5 the last, weekday 0 Sunday), Jn or n. */
typedef struct {
	char kind;      /* 'M', 'J' (1..365, February 29th never counted) or 'n' (0..365) */
	int month, week, weekday, day;
	int32_t time_s; /* local time of the change, seconds after midnight (may be negative or past 24h) */
} tz_rule_date_t;

typedef struct {
	int64_t *times;   /* transition instants, UTC seconds, ascending */
	int32_t *offsets; /* the offset (seconds east of UTC) from times[i] on */
	size_t n;
	int32_t initial;  /* before the first transition */
	bool has_rule;    /* after the last transition the footer's rule applies */
	int32_t std_off, dst_off;
	bool rule_dst;    /* the rule has daylight saving time */
	tz_rule_date_t dst_start, dst_end;
} tz_zone_t;

/* Parse TZif bytes. Returns 0, or -1 with one line in err; on error *out is zeroed. */
int tz_parse(const uint8_t *data, size_t len, tz_zone_t *out, char *err, size_t errlen);
void tz_free(tz_zone_t *z);

/* Seconds east of UTC in force at t (UTC seconds). */
int32_t tz_offset(const tz_zone_t *z, int64_t t);

/* The first instant after t at which the offset may change; INT64_MAX when it never does. */
int64_t tz_next_change(const tz_zone_t *z, int64_t t);

/* A zone name drashift looks up: Area/Location as in tzdata ("Europe/Berlin", "UTC"), never a path out of the zoneinfo. */
bool tz_valid_name(const char *name);

#endif
