#include "timer.h"

void timer_arm_within(uv_timer_t *t, uv_timer_cb cb, uint64_t delay_ms)
{
	if (uv_is_active((const uv_handle_t *)t) && t->timer_cb == cb && uv_timer_get_due_in(t) <= delay_ms)
		return;
	uv_timer_start(t, cb, delay_ms, 0);
}
