/*
 * libFuzzer target for tz_parse, and the window decisions over what it parses.
 *
 * A parse must either succeed or fail with one line and a zeroed zone. A
 * parsed zone must answer tz_offset() within a day of UTC and tz_next_change()
 * strictly after the instant asked about, and a window in it must answer
 * window_next_edge() (which walks those changes) in bounded time: the
 * sanitizers and libFuzzer's timeout catch the rest. Seeded with the system
 * zoneinfo (Debian's tzdata).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *   meson compile -C build-fuzz test/fuzz/fuzz_tzif
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tzif.h"
#include "window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	window_t w = { .days = 0x55, .start_s = 22 * 3600, .end_s = 2 * 3600 + 30 };
	char err[160];
	if (tz_parse(data, size, &w.zone, err, sizeof(err)) != 0) {
		static const tz_zone_t zero;
		if (err[0] == '\0' || strchr(err, '\n') != NULL || memcmp(&w.zone, &zero, sizeof(zero)) != 0)
			abort();
		return 0;
	}
	static const int64_t probes[] = { INT32_MIN, -1, 0, 1774745999, 1792890000, 2145916800, 2531955600, 4102444800 };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int64_t t = probes[i];
		int32_t off = tz_offset(&w.zone, t);
		if (off < -7 * 86400 || off > 7 * 86400 || tz_next_change(&w.zone, t) <= t)
			abort();
		int64_t edge = window_next_edge(&w, 1, t);
		if (edge != 0 && edge <= t)
			abort();
		(void)window_open(&w, 1, t);
	}
	tz_free(&w.zone);
	return 0;
}
