/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interval arithmetic on byte ranges of a file: what the reader merges
 * before it reads, what it leaves out because the page cache has it, and
 * (later) what the learner subtracts from a read set. One place for the
 * saturating end and the gap rule, which used to be written out wherever
 * ranges were fused.
 */
#include "config.h"

#include "interval.h"

guint64
interval_add_saturating(guint64 a, guint64 b)
{
	return a > G_MAXUINT64 - b ? G_MAXUINT64 : a + b;
}

Interval
interval_from_range(guint64 offset, guint64 length)
{
	return (Interval){ offset, interval_add_saturating(offset, length) };
}

guint64
interval_length(Interval iv)
{
	return iv.end - iv.start;
}

gboolean
interval_near(Interval a, Interval b, guint64 gap)
{
	return b.start <= interval_add_saturating(a.end, gap) &&
	       a.start <= interval_add_saturating(b.end, gap);
}

Interval
interval_hull(Interval a, Interval b)
{
	return (Interval){ MIN(a.start, b.start), MAX(a.end, b.end) };
}

Interval
interval_clamp(Interval iv, Interval bounds)
{
	Interval out;

	out.start = MAX(iv.start, bounds.start);
	out.end = MAX(out.start, MIN(iv.end, bounds.end));
	return out;
}

GArray *
interval_array_new(void)
{
	return g_array_new(FALSE, FALSE, sizeof(Interval));
}

static gint
cmp_interval(gconstpointer pa, gconstpointer pb)
{
	const Interval *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return 0;
}

void
interval_sort(GArray *ivs)
{
	g_return_if_fail(ivs != NULL);

	g_array_sort(ivs, cmp_interval);
}

void
interval_append(GArray *ivs, Interval iv, guint64 gap)
{
	g_return_if_fail(ivs != NULL);

	if (ivs->len > 0) {
		Interval *last = &g_array_index(ivs, Interval, ivs->len - 1);

		if (iv.start <= interval_add_saturating(last->end, gap)) {
			last->end = MAX(last->end, iv.end);
			return;
		}
	}
	g_array_append_val(ivs, iv);
}

void
interval_merge(GArray *ivs, guint64 gap)
{
	g_autoptr(GArray) out = NULL;

	g_return_if_fail(ivs != NULL);
	if (ivs->len < 2)
		return;
	interval_sort(ivs);
	out = interval_array_new();
	for (guint i = 0; i < ivs->len; i++)
		interval_append(out, g_array_index(ivs, Interval, i), gap);
	g_array_set_size(ivs, 0);
	g_array_append_vals(ivs, out->data, out->len);
}

void
interval_subtract(Interval iv, const GArray *have, GArray *pieces)
{
	guint64 cur = iv.start;

	g_return_if_fail(pieces != NULL);

	for (guint i = 0; have && i < have->len && cur < iv.end; i++) {
		const Interval *h = &g_array_index(have, Interval, i);

		if (h->end <= cur)
			continue;
		if (h->start >= iv.end)
			break;
		if (h->start > cur)
			g_array_append_val(pieces, ((Interval){ cur, h->start }));
		cur = MAX(cur, h->end);
	}
	if (cur < iv.end)
		g_array_append_val(pieces, ((Interval){ cur, iv.end }));
}

guint64
interval_total(const GArray *ivs)
{
	guint64 total = 0;

	g_return_val_if_fail(ivs != NULL, 0);

	for (guint i = 0; i < ivs->len; i++)
		total += interval_length(g_array_index(ivs, Interval, i));
	return total;
}
