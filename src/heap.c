/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Heap: pre-faulting the heap before a state load, giving back what a
 * load or a save freed (see heap.h).
 */
#include "config.h"

#include "heap.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include "pagecache.h"

/* glibc's default M_TOP_PAD (mallopt(3)). */
#define HEAP_TOP_PAD_DEFAULT (128 * 1024)
/*
 * The model takes up to this many times its state file's size in heap
 * (3.0 at 1,000 executables since the arrays are cut to size, 3.6
 * before): the common sizes load with few faults, and a larger model
 * gives the excess back after its load. The pre-faulted heap is all
 * resident at once, so a factor above what the model takes raises the
 * daemon's peak RSS by as much.
 */
#define HEAP_PER_STATE_BYTE 3
#define HEAP_PREPARE_MAX (64 * 1024 * 1024)

/*
 * Loading a state fills a few times the file's size of new heap, one
 * page fault per 4 KiB page. In a virtual machine a fault costs about
 * 10 us, more than parsing that page's share of the file: a 1.4 MB state
 * (1,000 executables) took 28 ms to load, 17 ms with this. So the heap is
 * grown once by the expected size (a larger M_TOP_PAD for one brk) and
 * faulted in by one madvise(MADV_POPULATE_WRITE) (Linux 5.14), and the
 * usual pad is restored after the load, so that what the model did not
 * use is trimmed by the next free(). Only with glibc's malloc on brk;
 * elsewhere (other C libraries, sanitizers, valgrind, kernels without
 * the advice) the loop below finds the break unmoved or madvise fails,
 * and the load simply takes its faults. Setting M_TOP_PAD also ends
 * glibc's sliding mmap threshold for the process: blocks of 128 KiB or
 * more stay mmapped. Nothing that large is allocated per cycle (minor
 * faults per cycle stay at zero at 1,000 executables), so that is moot.
 */
static void
heap_prepare(gsize bytes)
{
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)
	void *blocks[64];
	guint n = 0;
	char *before, *after, *start;
	gsize page = (gsize)pagecache_page_size();

	if (bytes < 256 * 1024)
		return;
	bytes = MIN(bytes, HEAP_PREPARE_MAX);
	if (!mallopt(M_TOP_PAD, (int)bytes))
		return;
	/* Blocks below the mmap threshold come from the heap's top. */
	before = sbrk(0);
	while (n < G_N_ELEMENTS(blocks) && (char *)sbrk(0) == before)
		blocks[n++] = g_malloc(64 * 1024);
	while (n > 0)
		g_free(blocks[--n]);
	/* After the frees, which may have trimmed a little. */
	after = sbrk(0);
	if (before == (char *)-1 || after == before)
		return;
	start = (char *)(((guintptr)before + page - 1) & ~(guintptr)(page - 1));
	if (after > start && madvise(start, (gsize)(after - start), MADV_POPULATE_WRITE) < 0)
		g_debug("cannot pre-fault the heap: %s", g_strerror(errno));
#else
	(void)bytes;
#endif
}

void
heap_prepared(void)
{
#ifdef __GLIBC__
	mallopt(M_TOP_PAD, HEAP_TOP_PAD_DEFAULT);
#endif
	heap_trim();
}

void
heap_single_arena(void)
{
#ifdef __GLIBC__
	/*
	 * glibc gives each thread that allocates while another holds the
	 * main heap's lock an arena of its own (up to eight per core), each
	 * reserving 64 MiB and keeping the pages it touched: the worker
	 * threads (readahead batches, file-system jobs) left three arenas of
	 * 8 to 160 KiB resident, a fifth of the daemon's private memory on a
	 * desktop (1,088 KiB RssAnon after 45 s, 868 KiB with one arena).
	 * The threads allocate little and rarely at once, so they share the
	 * main heap.
	 */
	if (!mallopt(M_ARENA_MAX, 1))
		g_debug("cannot limit malloc to one arena");
#endif
}

void
heap_trim(void)
{
#ifdef __GLIBC__
	/*
	 * A load frees its index tables and the room its arrays and hash
	 * tables outgrew, and a save its plan (a record per file), below
	 * what the model keeps, where free() gives no page back (1 MB of 4
	 * after importing 1,000 programs): the whole free pages among them
	 * go back too. A walk of the heap's free lists, once per load or
	 * save.
	 */
	malloc_trim(0);
#endif
}


void
heap_prepare_for_state(guint64 state_bytes)
{
	heap_prepare((gsize)MIN(state_bytes, G_MAXSIZE / HEAP_PER_STATE_BYTE) * HEAP_PER_STATE_BYTE);
}
