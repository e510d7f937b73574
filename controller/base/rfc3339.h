/*
 * RFC 3339 times as the Kubernetes API writes them: metav1.Time
 * ("2026-11-29T19:14:27Z") and MicroTime ("2026-11-29T19:14:27.123456Z").
 *
 * The one parser and formatter of times in drashift. Pure arithmetic on the
 * proleptic Gregorian calendar (Howard Hinnant's algorithms): no timegm() or
 * gmtime_r(), so no dependence on the process's TZ.
 */
#ifndef DRASHIFT_RFC3339_H
#define DRASHIFT_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* Room for the longest text rfc3339_format() writes: "YYYY-MM-DDTHH:MM:SS.ffffffZ" and NUL. */
#define RFC3339_LEN 28

/*
 * "2006-01-02T15:04:05Z", with an optional fraction of any length (digits
 * beyond microseconds are dropped) and "Z" or a numeric offset "+07:00", as
 * Go's RFC3339Nano writes it. Returns 0 with *unix_us set, or -1 for NULL or
 * anything else (including a date that does not exist, like February 29th of
 * a common year).
 */
int rfc3339_parse(const char *s, int64_t *unix_us);

/*
 * unix_us in UTC with frac_digits (0 to 6) digits of fraction, truncated:
 * 0 for metav1.Time, 6 for MicroTime. Returns 0, or -1 when the year is
 * outside 0..9999 or len is too small (buf then holds nothing useful).
 */
int rfc3339_format(int64_t unix_us, unsigned frac_digits, char *buf, size_t len);

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12), and back. */
int64_t rfc3339_days_from_civil(int64_t y, unsigned m, unsigned d);
void rfc3339_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
