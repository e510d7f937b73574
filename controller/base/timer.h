/*
 * Deadlines on libuv timers that events can bring forward but never push
 * back.
 *
 * uv_timer_start() on an active timer restarts it. A controller that re-arms
 * its "decide again in a little while" timer on every watch event therefore
 * never decides while events keep arriving closer together than that little
 * while, which is exactly when a busy cluster needs it. Every timer that is
 * re-armed per event goes through timer_arm_within() instead.
 */
#ifndef DRASHIFT_TIMER_H
#define DRASHIFT_TIMER_H

#include <stdint.h>
#include <uv.h>

/*
 * Make t fire cb in at most delay_ms (one-shot). A deadline already set for
 * cb that falls sooner is kept as it is; a later one, or a timer set for
 * another callback, is replaced.
 */
void timer_arm_within(uv_timer_t *t, uv_timer_cb cb, uint64_t delay_ms);

#endif
