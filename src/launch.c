/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Launch: the policy of an exec event (launch.h), apart from the daemon
 * that receives the events and from the page cache that measures them.
 */
#include "config.h"

#include "launch.h"

struct Launch {
	LaunchHooks hooks;
};

LaunchDecision
launch_decide(const Conf *conf, gint64 model_time, const Exe *exe, gint64 now_us)
{
	LaunchDecision d = { 0, FALSE };

	g_return_val_if_fail(conf != NULL && exe != NULL, d);

	/* Not seen running for two cycles: a launch, not a repeat. */
	if (conf->execpause > 0 && model_time - exe->update_time > 2 * conf->cycle)
		d.hold_until = now_us + conf->execpause * 1000;
	d.measure = exe->hits_checked_at == 0 ||
		    now_us - exe->hits_checked_at >= conf->cycle * G_USEC_PER_SEC;
	return d;
}

Launch *
launch_new(const LaunchHooks *hooks)
{
	Launch *launch;

	g_return_val_if_fail(hooks != NULL && hooks->measure != NULL, NULL);

	launch = g_new0(Launch, 1);
	launch->hooks = *hooks;
	return launch;
}

void
launch_free(Launch *launch)
{
	g_free(launch);
}

Exe *
launch_exec(Launch *launch, Model *model, const Conf *conf, const char *exe_path)
{
	const LaunchHooks *h;
	LaunchDecision d;
	Exe *exe;
	gint64 now;

	g_return_val_if_fail(launch != NULL && model != NULL && conf != NULL, NULL);
	g_return_val_if_fail(exe_path != NULL, NULL);

	exe = model_lookup_exe(model, exe_path);
	if (!exe)
		return NULL;
	h = &launch->hooks;
	now = h->now ? h->now(h->data) : g_get_monotonic_time();
	d = launch_decide(conf, model->time, exe, now);
	if (d.hold_until && h->hold)
		h->hold(h->data, d.hold_until);
	exe->hits.starts++;
	if (d.measure) {
		LaunchHits hits = { 0 };

		h->measure(h->data, exe, model->prefetch_seq, &hits);
		exe_hits_add(&exe->hits, hits.bytes, hits.prefetched, hits.probed, hits.resident);
		exe->hits_checked_at = now;
	}
	model->dirty = TRUE;
	return exe;
}
