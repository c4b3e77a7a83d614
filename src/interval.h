/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interval: half-open byte ranges [start, end) of one file, and the few
 * operations the daemon does on them: sort, merge (across a gap), append
 * to a sorted list, subtract, clamp.
 *
 * Pure values: no I/O, no state, nothing allocated except by the array
 * helpers. Ends saturate at G_MAXUINT64 instead of wrapping, so a hostile
 * offset and length (from a state file or a trace) cannot turn into a
 * small range at the start of the file.
 *
 * Ownership: an Interval is a plain value. The arrays are GArrays of
 * Interval that the caller owns.
 */
#pragma once

#include <glib.h>

typedef struct Interval {
	guint64 start;  /* first byte */
	guint64 end;    /* one past the last byte; never below start */
} Interval;

/* a + b, or G_MAXUINT64 where that overflows. */
guint64 interval_add_saturating(guint64 a, guint64 b);

/* [offset, offset + length), the end saturating at G_MAXUINT64. */
Interval interval_from_range(guint64 offset, guint64 length);

/* end - start. */
guint64 interval_length(Interval iv);

/*
 * Whether a and b overlap, touch, or lie at most gap bytes apart, in
 * either order (so unsorted neighbours are judged too).
 */
gboolean interval_near(Interval a, Interval b, guint64 gap);

/* The smallest interval that covers both a and b. */
Interval interval_hull(Interval a, Interval b);

/*
 * The part of iv that lies inside bounds. When they do not overlap the
 * result is empty (start == end), placed at the later of the two starts.
 */
Interval interval_clamp(Interval iv, Interval bounds);

/* A new, empty GArray of Interval. */
GArray *interval_array_new(void);

/* Sorts by start, the longer first where starts are equal. */
void interval_sort(GArray *ivs);

/*
 * Appends iv to ivs, or extends the last interval of ivs to iv's end
 * when they overlap, touch or lie at most gap bytes apart (the gap then
 * belongs to the result). ivs must be sorted by start and iv must not
 * start before its last interval: the order in which a scan finds runs.
 */
void interval_append(GArray *ivs, Interval iv, guint64 gap);

/*
 * Sorts ivs and fuses the intervals that overlap, touch or lie at most
 * gap bytes apart. Empty intervals are kept only where nothing covers them.
 */
void interval_merge(GArray *ivs, guint64 gap);

/*
 * Appends to pieces, in order, the parts of iv that no interval of have
 * covers. have must be sorted by start (it may hold overlapping
 * intervals, and may be NULL: nothing is covered).
 */
void interval_subtract(Interval iv, const GArray *have, GArray *pieces);

/* The sum of the lengths of the intervals of ivs. */
guint64 interval_total(const GArray *ivs);
