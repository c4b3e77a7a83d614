/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Heap: pre-faulting the heap a state load is about to fill, and giving
 * back what a load or a save freed.
 *
 * Loading a state fills a few times the file's size of new heap, and in
 * a virtual machine each page fault costs more than parsing that page's
 * share of the file. heap_prepare_for_state() grows the heap once by
 * the expected size and faults it in with one call; heap_prepared()
 * restores the usual pad so that what the load did not use is given
 * back. Both do nothing where the C library or the kernel cannot do this
 * (see heap.c).
 *
 * Ownership: no objects. The process's malloc settings are changed
 * between heap_prepare_for_state() and heap_prepared() only, and for
 * good by heap_single_arena(); call them from the main thread around the
 * load, with no other thread allocating heavily.
 */
#pragma once

#include <glib.h>

/*
 * Prepares the heap for loading a state file of state_bytes bytes: up to
 * three times that (at most 64 MiB; under 256 KiB of it nothing is done).
 * Best effort: returns nothing, logs at debug level when the kernel
 * refuses.
 */
void heap_prepare_for_state(guint64 state_bytes);

/* Restores the malloc settings heap_prepare_for_state() changed, then heap_trim(). */
void heap_prepared(void);

/*
 * Makes every thread allocate from the main heap (one malloc arena):
 * call from the main thread before any other thread starts. Does nothing
 * where the C library has no such setting.
 */
void heap_single_arena(void);

/*
 * Gives back to the kernel the whole free pages inside the heap, not only
 * at its top (glibc's malloc_trim): after a load or a save, which free
 * much at once below what the model keeps. Does nothing elsewhere.
 */
void heap_trim(void);
