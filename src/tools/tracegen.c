/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preload-tracegen: seeded synthetic traces for preload-replay.
 *
 * Real traces are private (they list what people run) and slow to
 * collect, so the regression tests and the benchmarks run on traces made
 * here instead. Each scenario builds a small world (shared libraries,
 * applications with private files, desktops, users) and then simulates
 * it cycle by cycle: users launch applications that tend to follow one
 * another (a Markov chain over their applications), sessions last
 * several cycles, users go idle, log out and in. Everything random comes
 * from one GRand seeded by --seed, consumed in a fixed order, so a
 * scenario, a seed and a cycle count always give the same trace.
 *
 * The memory figures are chosen so that the default budget of preload
 * (memtotal -10 %, memfree 50 %) covers only a fraction of the
 * applications: prediction has to choose. doc/benchmarks.md describes
 * each scenario.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define PAGE 4096
#define KB G_GUINT64_CONSTANT(1024)
#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

/* ---- the world ---- */

/* One mapped range (a "segment" of a file). */
typedef struct GenSeg {
	guint file;           /* index in Gen.files */
	guint64 offset;
	guint64 length;
} GenSeg;

typedef struct GenFile {
	char *path;
	GArray *segs;         /* GenSeg, the ranges programs map */
} GenFile;

typedef struct GenExe {
	char *path;
	GArray *maps;         /* GenSeg: everything it maps */
	guint64 bytes;        /* sum of its maps' lengths */
	double mean_session;  /* cycles a session lasts on average */

	gint64 stop_at;       /* first cycle it no longer runs; <= now: stopped */
	gboolean maps_written;
} GenExe;

/* A user: applications, how they follow each other, and a desktop. */
typedef struct GenUser {
	GArray *apps;         /* guint exe indices */
	GArray *desktop;      /* guint exe indices, running while logged in */
	double *follow;       /* n x n: row i = P(next launch | last was i) */
	double *first;        /* n: first launch after login or idleness */
	double mean_gap;      /* cycles between launches */
	double p_idle;        /* after a launch, chance of going idle */
	guint idle_min, idle_max;

	gboolean logged_in;
	int last;             /* index in apps of the last launch, -1 none */
	gint64 next_launch;   /* cycle of the next launch */
} GenUser;

/* A build: a fixed sequence of tools (scale scenario). */
typedef struct GenProject {
	GArray *tools;        /* guint exe indices, in build order */
	double weight;        /* how often it is built */
} GenProject;

typedef struct Gen {
	GRand *rand;
	GPtrArray *files;     /* GenFile * */
	GHashTable *file_ids; /* path -> index + 1 */
	GPtrArray *exes;      /* GenExe * */
	GArray *system;       /* exe indices running all the time */
	GPtrArray *users;     /* GenUser * */
	GPtrArray *projects;  /* GenProject * */

	/* two-user: whose turn it is and until when */
	int turn;             /* index in users, -1 nobody */
	int waiting;          /* who logs in next */
	gint64 turn_end;
	gint64 next_login;

	/* scale: the build in progress */
	int build;            /* index in projects, -1 none */
	guint build_step;
	gint64 next_build;
	double build_rate;    /* builds started per cycle, on average */
	guint n_projects;     /* how many projects scale makes (--projects) */
	double build_gap;     /* mean cycles between builds (--build-gap) */

	/* memory */
	guint64 mem_total;    /* KB */
	double budget_share;  /* budget / unique bytes of the applications */
	guint64 budget_kb;    /* the target budget, from budget_share */
	guint64 free_kb;      /* MemFree giving that budget */
} Gen;

static void
gen_file_free(gpointer data)
{
	GenFile *f = data;

	g_free(f->path);
	g_array_unref(f->segs);
	g_free(f);
}

static void
gen_exe_free(gpointer data)
{
	GenExe *e = data;

	g_free(e->path);
	g_array_unref(e->maps);
	g_free(e);
}

static void
gen_user_free(gpointer data)
{
	GenUser *u = data;

	g_array_unref(u->apps);
	g_array_unref(u->desktop);
	g_free(u->follow);
	g_free(u->first);
	g_free(u);
}

static void
gen_project_free(gpointer data)
{
	GenProject *p = data;

	g_array_unref(p->tools);
	g_free(p);
}

static Gen *
gen_new(guint32 seed)
{
	Gen *gen = g_new0(Gen, 1);

	gen->rand = g_rand_new_with_seed(seed);
	gen->files = g_ptr_array_new_with_free_func(gen_file_free);
	gen->file_ids = g_hash_table_new(g_str_hash, g_str_equal);
	gen->exes = g_ptr_array_new_with_free_func(gen_exe_free);
	gen->system = g_array_new(FALSE, FALSE, sizeof(guint));
	gen->users = g_ptr_array_new_with_free_func(gen_user_free);
	gen->projects = g_ptr_array_new_with_free_func(gen_project_free);
	gen->turn = -1;
	gen->build = -1;
	gen->n_projects = 46;
	gen->build_gap = 40;
	return gen;
}

static void
gen_free(Gen *gen)
{
	if (!gen)
		return;
	g_rand_free(gen->rand);
	g_hash_table_unref(gen->file_ids);
	g_ptr_array_unref(gen->files);
	g_ptr_array_unref(gen->exes);
	g_array_unref(gen->system);
	g_ptr_array_unref(gen->users);
	g_ptr_array_unref(gen->projects);
	g_free(gen);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Gen, gen_free)

/* ---- random helpers ---- */

static double
uniform(Gen *gen)
{
	return g_rand_double(gen->rand);
}

/* Log-uniform between lo and hi: sizes spread over orders of magnitude. */
static double
log_uniform(Gen *gen, double lo, double hi)
{
	return exp(log(lo) + uniform(gen) * (log(hi) - log(lo)));
}

/* A size in bytes around `kb` KB (+-25 %), whole pages. */
static guint64
size_near(Gen *gen, double kb)
{
	double bytes = kb * 1024.0 * (0.75 + 0.5 * uniform(gen));
	guint64 pages = (guint64)ceil(bytes / PAGE);

	return MAX(pages, 1) * PAGE;
}

/* Cycles >= 1 with the given mean: geometric, memoryless like a session. */
static gint64
geometric(Gen *gen, double mean)
{
	double u;

	if (mean <= 1.0)
		return 1;
	u = 1.0 - uniform(gen);  /* (0, 1] */
	return 1 + (gint64)floor(log(u) / log(1.0 - 1.0 / mean));
}

static guint
pick_weighted(Gen *gen, const double *weights, guint n)
{
	double total = 0, x;

	for (guint i = 0; i < n; i++)
		total += weights[i];
	x = uniform(gen) * total;
	for (guint i = 0; i < n; i++) {
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}

static guint
pick_index(Gen *gen, guint n)
{
	return (guint)g_rand_int_range(gen->rand, 0, (gint32)n);
}

/* ---- building the world ---- */

static guint
file_add(Gen *gen, const char *path)
{
	GenFile *f;

	g_return_val_if_fail(!g_hash_table_contains(gen->file_ids, path), 0);
	f = g_new0(GenFile, 1);
	f->path = g_strdup(path);
	f->segs = g_array_new(FALSE, FALSE, sizeof(GenSeg));
	g_ptr_array_add(gen->files, f);
	g_hash_table_insert(gen->file_ids, f->path, GUINT_TO_POINTER(gen->files->len));
	return gen->files->len - 1;
}

static void
file_add_seg(Gen *gen, guint file, guint64 offset, guint64 length)
{
	GenFile *f = g_ptr_array_index(gen->files, file);
	GenSeg seg = { file, offset, length };

	g_array_append_val(f->segs, seg);
}

/*
 * An ELF object of about `kb` KB, mapped the way ld.so maps one: headers
 * (r--p), code (r-xp), read-only data (r--p), writable data (rw-p), each
 * range following the previous one in the file.
 */
static guint
elf_new(Gen *gen, const char *path, double kb)
{
	static const double share[] = { 0.05, 0.62, 0.28, 0.05 };
	guint64 total = size_near(gen, kb), offset = 0;
	guint file = file_add(gen, path);

	for (guint i = 0; i < G_N_ELEMENTS(share); i++) {
		guint64 len = MAX((guint64)(total * share[i]) / PAGE, 1) * PAGE;

		file_add_seg(gen, file, offset, len);
		offset += len;
	}
	return file;
}

/* A data file mapped whole (fonts, caches, resource packs). */
static guint
data_new(Gen *gen, const char *path, double kb)
{
	guint file = file_add(gen, path);

	file_add_seg(gen, file, 0, size_near(gen, kb));
	return file;
}

/* A set of shared files, from a table of names and sizes. */
typedef struct FileSpec {
	const char *name;     /* under LIBDIR unless absolute */
	double kb;
} FileSpec;

static GArray *
files_from_specs(Gen *gen, const FileSpec *specs, guint n)
{
	GArray *files = g_array_new(FALSE, FALSE, sizeof(guint));

	for (guint i = 0; i < n; i++) {
		g_autofree char *path = specs[i].name[0] == '/' ? g_strdup(specs[i].name)
				: g_strconcat(LIBDIR, specs[i].name, NULL);
		guint file = g_str_has_suffix(path, ".so") || strstr(path, ".so.")
				? elf_new(gen, path, specs[i].kb)
				: data_new(gen, path, specs[i].kb);

		g_array_append_val(files, file);
	}
	return files;
}

/* Every C program maps these. */
static const FileSpec core_specs[] = {
	{ "ld-linux-x86-64.so.2", 240 }, { "libc.so.6", 2000 }, { "libm.so.6", 900 },
	{ "libgcc_s.so.1", 120 }, { "libz.so.1.2.13", 120 }, { "libstdc++.so.6.0.30", 2200 },
	{ "/usr/lib/locale/locale-archive", 3000 },
};

/* Most graphical programs map most of these. */
static const FileSpec platform_specs[] = {
	{ "libglib-2.0.so.0.7400.6", 1300 }, { "libgobject-2.0.so.0.7400.6", 350 },
	{ "libgio-2.0.so.0.7400.6", 1900 }, { "libfontconfig.so.1.12.0", 300 },
	{ "libfreetype.so.6.18.3", 800 }, { "libharfbuzz.so.0.60000.0", 1000 },
	{ "libpng16.so.16.39.0", 200 }, { "libX11.so.6.4.0", 1300 }, { "libxcb.so.1.1.0", 200 },
	{ "libXext.so.6.4.0", 80 }, { "libXrender.so.1.3.0", 50 }, { "libexpat.so.1.8.10", 200 },
	{ "libdbus-1.so.3.32.4", 350 }, { "libsystemd.so.0.35.0", 800 },
	{ "libpcre2-8.so.0.11.2", 600 }, { "libffi.so.8.1.2", 50 }, { "libbz2.so.1.0.4", 80 },
	{ "libjpeg.so.62.3.0", 450 }, { "libicuuc.so.72.1", 2000 }, { "libicudata.so.72.1", 30000 },
	{ "libxml2.so.2.9.14", 2000 }, { "libcrypto.so.3", 4500 }, { "libssl.so.3", 700 },
	{ "libsqlite3.so.0.8.6", 1500 },
	{ "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 750 },
	{ "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", 700 },
	{ "/var/cache/fontconfig/3830d5c3ddfd5cd38a049b759396e72e-le64.cache-7", 300 },
	{ "/var/cache/fontconfig/e13b20fdb08344e0e664864cc2ede53d-le64.cache-7", 120 },
};

/* The GTK stack. */
static const FileSpec gtk_specs[] = {
	{ "libgtk-3.so.0.2406.32", 8000 }, { "libgdk-3.so.0.2406.32", 1000 },
	{ "libpango-1.0.so.0.5000.12", 400 }, { "libpangocairo-1.0.so.0.5000.12", 80 },
	{ "libpangoft2-1.0.so.0.5000.12", 120 }, { "libcairo.so.2.11600.0", 1200 },
	{ "libcairo-gobject.so.2.11600.0", 60 }, { "libatk-1.0.so.0.24609.1", 200 },
	{ "libatk-bridge-2.0.so.0.0.0", 250 }, { "libgdk_pixbuf-2.0.so.0.4200.10", 200 },
	{ "libepoxy.so.0.0.0", 1200 }, { "libwayland-client.so.0.21.0", 80 },
	{ "libxkbcommon.so.0.0.0", 300 },
	{ "/usr/share/icons/Adwaita/icon-theme.cache", 4000 },
};

/* The Qt and KDE Frameworks stack. */
static const FileSpec kde_specs[] = {
	{ "libQt5Core.so.5.15.8", 6000 }, { "libQt5Gui.so.5.15.8", 7000 },
	{ "libQt5Widgets.so.5.15.8", 6500 }, { "libQt5DBus.so.5.15.8", 600 },
	{ "libQt5Network.so.5.15.8", 1300 }, { "libQt5Xml.so.5.15.8", 250 },
	{ "libQt5Qml.so.5.15.8", 4000 }, { "libQt5Quick.so.5.15.8", 4000 },
	{ "libKF5CoreAddons.so.5.103.0", 500 }, { "libKF5ConfigCore.so.5.103.0", 400 },
	{ "libKF5ConfigGui.so.5.103.0", 120 }, { "libKF5I18n.so.5.103.0", 300 },
	{ "libKF5WidgetsAddons.so.5.103.0", 1500 }, { "libKF5XmlGui.so.5.103.0", 1300 },
	{ "libKF5KIOCore.so.5.103.0", 1500 }, { "libKF5KIOWidgets.so.5.103.0", 1300 },
	{ "libKF5Service.so.5.103.0", 500 }, { "libKF5IconThemes.so.5.103.0", 200 },
	{ "/usr/share/icons/breeze/icon-theme.cache", 3500 },
};

typedef enum {
	STACK_NONE,           /* core libraries only */
	STACK_GTK,
	STACK_KDE,
} Stack;

/* The shared files of the world, by stack. */
typedef struct Shared {
	GArray *core, *platform, *gtk, *kde;
} Shared;

static void
shared_clear(Shared *s)
{
	g_clear_pointer(&s->core, g_array_unref);
	g_clear_pointer(&s->platform, g_array_unref);
	g_clear_pointer(&s->gtk, g_array_unref);
	g_clear_pointer(&s->kde, g_array_unref);
}

static void
shared_init(Gen *gen, Shared *s)
{
	s->core = files_from_specs(gen, core_specs, G_N_ELEMENTS(core_specs));
	s->platform = files_from_specs(gen, platform_specs, G_N_ELEMENTS(platform_specs));
	s->gtk = files_from_specs(gen, gtk_specs, G_N_ELEMENTS(gtk_specs));
	s->kde = files_from_specs(gen, kde_specs, G_N_ELEMENTS(kde_specs));
}

static void
exe_add_file(GenExe *exe, Gen *gen, guint file)
{
	GenFile *f = g_ptr_array_index(gen->files, file);

	for (guint i = 0; i < f->segs->len; i++) {
		GenSeg seg = g_array_index(f->segs, GenSeg, i);

		g_array_append_val(exe->maps, seg);
		exe->bytes += seg.length;
	}
}

/* Adds each file of `files` with probability p (1: all). */
static void
exe_add_files(GenExe *exe, Gen *gen, const GArray *files, double p)
{
	for (guint i = 0; i < files->len; i++) {
		if (p >= 1.0 || uniform(gen) < p)
			exe_add_file(exe, gen, g_array_index(files, guint, i));
	}
}

/* What a program is made of. */
typedef struct AppSpec {
	const char *path;     /* the executable */
	Stack stack;
	double exe_kb;        /* the executable file */
	double private_mb;    /* its own libraries and data, total */
	double session;       /* mean session, cycles */
} AppSpec;

/*
 * A program: its executable, the core libraries, most of the platform
 * and its toolkit's libraries, and private libraries and data files
 * (under /usr/lib/<name>/ and /usr/share/<name>/) adding up to about
 * private_mb.
 */
static guint
app_new(Gen *gen, const Shared *shared, const AppSpec *spec)
{
	GenExe *exe = g_new0(GenExe, 1);
	g_autofree char *name = g_path_get_basename(spec->path);
	double left = spec->private_mb * 1024.0;
	guint n = 0;

	exe->path = g_strdup(spec->path);
	exe->maps = g_array_new(FALSE, FALSE, sizeof(GenSeg));
	exe->mean_session = spec->session;
	exe->stop_at = -1;

	exe_add_file(exe, gen, elf_new(gen, spec->path, spec->exe_kb));
	exe_add_files(exe, gen, shared->core, 1.0);
	if (spec->stack != STACK_NONE)
		exe_add_files(exe, gen, shared->platform, 0.75);
	if (spec->stack == STACK_GTK)
		exe_add_files(exe, gen, shared->gtk, 0.9);
	else if (spec->stack == STACK_KDE)
		exe_add_files(exe, gen, shared->kde, 0.9);

	/* Private files: a few large ones and several small ones. */
	while (left > 64) {
		double kb = MIN(left, log_uniform(gen, 64, MAX(65, left * 0.6)));
		g_autofree char *path = NULL;
		guint file;

		if (n % 3 == 2) {
			path = g_strdup_printf("/usr/share/%s/resources-%u.pak", name, n);
			file = data_new(gen, path, kb);
		} else {
			path = g_strdup_printf("/usr/lib/%s/lib%s-part%u.so", name, name, n);
			file = elf_new(gen, path, kb);
		}
		exe_add_file(exe, gen, file);
		left -= kb;
		n++;
	}
	g_ptr_array_add(gen->exes, exe);
	return gen->exes->len - 1;
}

static GArray *
apps_from_specs(Gen *gen, const Shared *shared, const AppSpec *specs, guint n)
{
	GArray *apps = g_array_new(FALSE, FALSE, sizeof(guint));

	for (guint i = 0; i < n; i++) {
		guint exe = app_new(gen, shared, &specs[i]);

		g_array_append_val(apps, exe);
	}
	return apps;
}

static const AppSpec system_specs[] = {
	{ "/usr/lib/xorg/Xorg", STACK_NONE, 2400, 6, 0 },
	{ "/usr/bin/dbus-daemon", STACK_NONE, 250, 0, 0 },
	{ "/usr/lib/systemd/systemd-logind", STACK_NONE, 300, 1, 0 },
	{ "/usr/lib/systemd/systemd-journald", STACK_NONE, 200, 1, 0 },
	{ "/usr/bin/pipewire", STACK_NONE, 150, 3, 0 },
};

static const AppSpec gnome_desktop_specs[] = {
	{ "/usr/bin/gnome-shell", STACK_GTK, 30, 25, 0 },
	{ "/usr/libexec/gsd-xsettings", STACK_GTK, 60, 1, 0 },
	{ "/usr/libexec/evolution-source-registry", STACK_GTK, 80, 4, 0 },
	{ "/usr/libexec/tracker-miner-fs-3", STACK_GTK, 200, 6, 0 },
};

static const AppSpec kde_desktop_specs[] = {
	{ "/usr/bin/plasmashell", STACK_KDE, 900, 30, 0 },
	{ "/usr/bin/kwin_x11", STACK_KDE, 1200, 12, 0 },
	{ "/usr/bin/kded5", STACK_KDE, 150, 5, 0 },
	{ "/usr/bin/krunner", STACK_KDE, 250, 6, 0 },
	{ "/usr/bin/baloo_file", STACK_KDE, 100, 3, 0 },
};

/* GNOME user's applications; mean sessions in 20 s cycles. */
static const AppSpec gnome_app_specs[] = {
	{ "/usr/lib/firefox/firefox", STACK_GTK, 700, 85, 40 },
	{ "/usr/bin/evolution", STACK_GTK, 600, 70, 30 },
	{ "/usr/bin/gedit", STACK_GTK, 40, 8, 12 },
	{ "/usr/libexec/gnome-terminal-server", STACK_GTK, 450, 6, 25 },
	{ "/usr/bin/eog", STACK_GTK, 30, 7, 6 },
	{ "/usr/bin/evince", STACK_GTK, 500, 12, 10 },
	{ "/usr/bin/rhythmbox", STACK_GTK, 30, 20, 35 },
	{ "/usr/bin/totem", STACK_GTK, 40, 25, 15 },
	{ "/usr/lib/libreoffice/program/soffice.bin", STACK_GTK, 30, 95, 20 },
	{ "/usr/bin/gimp-2.10", STACK_GTK, 9000, 45, 18 },
	{ "/usr/bin/nautilus", STACK_GTK, 900, 10, 8 },
	{ "/usr/bin/pidgin", STACK_GTK, 400, 15, 30 },
	{ "/usr/bin/gnome-calculator", STACK_GTK, 600, 2, 4 },
	{ "/usr/bin/inkscape", STACK_GTK, 60, 60, 15 },
	{ "/usr/bin/transmission-gtk", STACK_GTK, 700, 4, 20 },
	{ "/usr/games/gnome-mines", STACK_GTK, 200, 6, 6 },
};

/* KDE user's applications (Firefox is the same program for both users). */
static const AppSpec kde_app_specs[] = {
	{ "/usr/bin/kmail", STACK_KDE, 3000, 40, 30 },
	{ "/usr/bin/kate", STACK_KDE, 300, 15, 12 },
	{ "/usr/bin/konsole", STACK_KDE, 700, 5, 25 },
	{ "/usr/bin/okular", STACK_KDE, 800, 12, 10 },
	{ "/usr/bin/gwenview", STACK_KDE, 600, 10, 6 },
	{ "/usr/bin/elisa", STACK_KDE, 1000, 15, 35 },
	{ "/usr/bin/dragon", STACK_KDE, 300, 20, 15 },
	{ "/usr/bin/calligrawords", STACK_KDE, 400, 70, 20 },
	{ "/usr/bin/digikam", STACK_KDE, 1500, 80, 18 },
	{ "/usr/bin/dolphin", STACK_KDE, 400, 12, 8 },
	{ "/usr/bin/kcalc", STACK_KDE, 300, 2, 4 },
	{ "/usr/games/kpat", STACK_KDE, 1500, 8, 6 },
	{ "/usr/bin/ktorrent", STACK_KDE, 1500, 6, 20 },
	{ "/usr/bin/krita", STACK_KDE, 900, 110, 18 },
	{ "/usr/bin/konversation", STACK_KDE, 2500, 6, 30 },
};

/*
 * A user of `apps`: each application has `n_follow` favourite successors
 * taking `strength` of its launches between them (the first twice as
 * often as the next), the rest spread in proportion to `popularity` (n
 * weights; NULL: evenly). First launches after login or idleness favour
 * the first two applications (a browser, the mail), or follow
 * `popularity` when given.
 */
static GenUser *
user_new_weighted(Gen *gen, GArray *apps, GArray *desktop, guint n_follow, double strength,
		  const double *popularity)
{
	GenUser *u = g_new0(GenUser, 1);
	guint n = apps->len;

	u->apps = apps;
	u->desktop = desktop ? desktop : g_array_new(FALSE, FALSE, sizeof(guint));
	u->follow = g_new0(double, (gsize)n * n);
	u->first = g_new0(double, n);
	u->mean_gap = 4;
	u->p_idle = 0.04;
	u->idle_min = 30;
	u->idle_max = 300;
	u->last = -1;

	for (guint i = 0; i < n; i++) {
		double *row = &u->follow[(gsize)i * n];
		double favour = 0, total = 0, rest = 0;

		for (guint k = 0; k < n_follow && n > 1; k++) {
			guint j;

			/* distinct favourites, never the application itself */
			do
				j = pick_index(gen, n);
			while (j == i || row[j] > 0);
			row[j] = (double)(1u << (n_follow - k));
			favour += row[j];
		}
		for (guint j = 0; j < n; j++)
			if (!(row[j] > 0) && j != i)
				rest += popularity ? popularity[j] : 1.0;
		for (guint j = 0; j < n; j++) {
			if (row[j] > 0)
				row[j] = strength * row[j] / favour;
			else if (j != i && rest > 0)
				row[j] = (1.0 - (favour > 0 ? strength : 0)) *
					 (popularity ? popularity[j] : 1.0) / rest;
			total += row[j];
		}
		for (guint j = 0; j < n; j++)
			row[j] /= total;
		u->first[i] = popularity ? popularity[i] : i < 2 ? 4.0 : 1.0;
	}
	return u;
}

static GenUser *
user_new(Gen *gen, GArray *apps, GArray *desktop, guint n_follow, double strength)
{
	return user_new_weighted(gen, apps, desktop, n_follow, strength, NULL);
}

/* ---- running it ---- */

static GenExe *
exe_at(Gen *gen, guint index)
{
	return g_ptr_array_index(gen->exes, index);
}

static gboolean
is_running(const GenExe *exe, gint64 now)
{
	return exe->stop_at > now;
}

static void
start(Gen *gen, guint index, gint64 now, gint64 cycles)
{
	GenExe *exe = exe_at(gen, index);

	exe->stop_at = now + MAX(cycles, 1);
}

/* A session: geometric, but not absurdly longer than the mean. */
static gint64
session_length(Gen *gen, const GenExe *exe)
{
	return MIN(geometric(gen, exe->mean_session), (gint64)(6 * exe->mean_session) + 1);
}

static void
user_login(Gen *gen, GenUser *u, gint64 now, gint64 until)
{
	u->logged_in = TRUE;
	u->last = -1;
	u->next_launch = now + 1 + geometric(gen, 2);
	for (guint i = 0; i < u->desktop->len; i++)
		start(gen, g_array_index(u->desktop, guint, i), now, until - now);
}

/* Logging out ends every program of the user at once. */
static void
user_logout(Gen *gen, GenUser *u, gint64 now)
{
	u->logged_in = FALSE;
	for (guint i = 0; i < u->apps->len; i++) {
		GenExe *exe = exe_at(gen, g_array_index(u->apps, guint, i));

		exe->stop_at = MIN(exe->stop_at, now);
	}
	for (guint i = 0; i < u->desktop->len; i++)
		exe_at(gen, g_array_index(u->desktop, guint, i))->stop_at = now;
}

static void
user_step(Gen *gen, GenUser *u, gint64 now)
{
	guint n = u->apps->len, next;
	GenExe *exe;

	if (!u->logged_in || now < u->next_launch)
		return;
	next = u->last < 0 ? pick_weighted(gen, u->first, n)
			   : pick_weighted(gen, &u->follow[(gsize)u->last * n], n);
	exe = exe_at(gen, g_array_index(u->apps, guint, next));
	u->last = (int)next;
	if (is_running(exe, now)) {
		/* Switching to an open window: no start, and soon another step. */
		u->next_launch = now + geometric(gen, u->mean_gap / 2);
		return;
	}
	start(gen, g_array_index(u->apps, guint, next), now, session_length(gen, exe));
	u->next_launch = now + geometric(gen, u->mean_gap);
	if (uniform(gen) < u->p_idle) {
		/* Away: what is open runs out its session, then nothing for a while. */
		u->next_launch = now + u->idle_min +
				 pick_index(gen, u->idle_max - u->idle_min + 1);
		u->last = -1;
	}
}

/* Two users take turns at one machine (two-user). */
static void
turns_step(Gen *gen, gint64 now)
{
	if (gen->users->len < 2)
		return;
	if (gen->turn >= 0 && now >= gen->turn_end) {
		user_logout(gen, g_ptr_array_index(gen->users, gen->turn), now);
		gen->waiting = gen->turn == 0 ? 1 : 0;
		gen->turn = -1;
		gen->next_login = now + 3 + pick_index(gen, 28);
	}
	if (gen->turn < 0 && now >= gen->next_login) {
		gen->turn = gen->waiting;
		gen->turn_end = now + 150 + pick_index(gen, 301);
		user_login(gen, g_ptr_array_index(gen->users, gen->turn), now, gen->turn_end);
	}
}

/* Builds run their tools one after the other (scale). */
static void
builds_step(Gen *gen, gint64 now)
{
	GenProject *p;

	if (gen->projects->len == 0)
		return;
	if (gen->build < 0) {
		g_autofree double *weights = NULL;
		guint n = gen->projects->len;

		if (now < gen->next_build)
			return;
		weights = g_new(double, n);
		for (guint i = 0; i < n; i++)
			weights[i] = ((GenProject *)g_ptr_array_index(gen->projects, i))->weight;
		gen->build = (int)pick_weighted(gen, weights, n);
		gen->build_step = 0;
	}
	p = g_ptr_array_index(gen->projects, gen->build);
	/* The next tool starts when the previous one has ended. */
	if (gen->build_step > 0 &&
	    is_running(exe_at(gen, g_array_index(p->tools, guint, gen->build_step - 1)), now))
		return;
	if (gen->build_step == p->tools->len) {
		gen->build = -1;
		gen->next_build = now + geometric(gen, 1.0 / gen->build_rate);
		return;
	}
	start(gen, g_array_index(p->tools, guint, gen->build_step), now, 1 + pick_index(gen, 2));
	gen->build_step++;
}

/* ---- the bound: what the true model predicts ---- */

/*
 * An observer that knows every parameter of the world (each user's chain,
 * first-launch weights, gap, idleness, the turns, the builds) but sees
 * only what a daemon sees: which programs run at each cycle. After each
 * cycle it gives, for every program, the probability that it starts at
 * the next one, the Bayes-optimal forecast under the true model; a
 * predictor that fills the budget by these is the best any learner can
 * do on the trace (preload-replay --bound).
 *
 * What a user does next depends on state the trace does not show: the
 * application launched or switched to last (a switch to an open window is
 * no start), whether the user went away, and the launch timer. The
 * observer keeps a distribution over that state (a forward filter):
 *   after a start    last = j, next launch at rate 1/gap per cycle
 *   after a switch   last = j, at rate 2/gap (capped at 1)
 *   away             e cycles since going away: a launch at idle_min..idle_max
 *   logged in        e cycles since login: none at e = 1, rate 1/2 after
 * The one thing it gets wrong on purpose: an application chosen in the
 * very cycle its session ends starts again, which looks like no start
 * (it ran before and runs after); the filter counts it as a switch.
 */
typedef struct Belief {
	gboolean active;      /* logged in, as the observer sees it */
	double *started;      /* n: after a start of app j */
	double *switched;     /* n: after a switch to app j */
	double *away;         /* idle_max + 1: away, e cycles in at the next step */
	double login[3];      /* [1]: the next step is the first after login; [2]: later */
	double *first;        /* n: first-launch weights, normalised */
	double *push;         /* n + 1: mass firing at each last (index 0 = none) */
	/* scratch */
	double *n_started, *n_switched, *n_away;
} Belief;

typedef struct Bound {
	FILE *out;
	GHashTable *ids;      /* exe index + 1 -> path id + 1 */
	gboolean *was;        /* exes: running at the previous cycle */
	gboolean *is;         /* exes: running at this cycle */
	gint64 *since;        /* exes: cycle of its last start */
	double *p;            /* exes: P(starts at the next cycle) */
	Belief *beliefs;      /* one per user */
	int *tool_project, *tool_step;  /* exes: the build tool they are, or -1 */
	gint64 logout_at;     /* two-user: when the last user was seen to leave, -1 */
	int last_user;        /* two-user: who was logged in last, -1 nobody yet */
	gboolean built;       /* scale: a build was seen */
	guint lines;
} Bound;

static double
hazard_of_mean(double mean)
{
	return mean <= 1.0 ? 1.0 : 1.0 / mean;
}

/* P(a launch at this step) for the away state e cycles in. */
static double
hazard_away(const GenUser *u, guint e)
{
	if (e < u->idle_min)
		return 0;
	if (e >= u->idle_max)
		return 1;
	return 1.0 / (double)(u->idle_max - e + 1);
}

/* P(next = j | last), the user's own choice (last < 0: first launch). */
static const double *
choice_row(const GenUser *u, const Belief *b, int last)
{
	return last < 0 ? b->first : &u->follow[(gsize)last * u->apps->len];
}

static void
belief_login(const GenUser *u, Belief *b)
{
	guint n = u->apps->len;

	memset(b->started, 0, n * sizeof(double));
	memset(b->switched, 0, n * sizeof(double));
	memset(b->away, 0, (u->idle_max + 1) * sizeof(double));
	b->login[0] = b->login[2] = 0;
	b->login[1] = 1;
	b->active = TRUE;
}

/*
 * push[0] = mass that fires with no last application, push[1 + j] with
 * last = j, at the coming step.
 */
static void
belief_push(const GenUser *u, Belief *b)
{
	guint n = u->apps->len;
	double hs = hazard_of_mean(u->mean_gap), hw = hazard_of_mean(u->mean_gap / 2);

	b->push[0] = b->login[2] * 0.5;
	for (guint e = 0; e <= u->idle_max; e++)
		b->push[0] += b->away[e] * hazard_away(u, e);
	for (guint j = 0; j < n; j++)
		b->push[1 + j] = b->started[j] * hs + b->switched[j] * hw;
}

/*
 * One step of the user: `start` is the app index that started (-1 none),
 * `was` tells which apps ran before it.
 */
static void
belief_step(const GenUser *u, Belief *b, int start, const gboolean *was_app)
{
	guint n = u->apps->len;
	double hs = hazard_of_mean(u->mean_gap), hw = hazard_of_mean(u->mean_gap / 2);
	double total = 0;

	belief_push(u, b);
	memset(b->n_started, 0, n * sizeof(double));
	memset(b->n_switched, 0, n * sizeof(double));
	memset(b->n_away, 0, (u->idle_max + 1) * sizeof(double));
	if (start >= 0) {
		double w = 0;

		for (int last = -1; last < (int)n; last++)
			w += b->push[1 + last] * choice_row(u, b, last)[start];
		b->n_started[start] = w * (1 - u->p_idle);
		b->n_away[1] = w * u->p_idle;
		b->login[1] = b->login[2] = 0;
	} else {
		/* no launch: every state ages; or a switch to an open window */
		for (guint j = 0; j < n; j++) {
			b->n_started[j] = b->started[j] * (1 - hs);
			b->n_switched[j] = b->switched[j] * (1 - hw);
		}
		for (guint e = 0; e < u->idle_max; e++)
			b->n_away[e + 1] = b->away[e] * (1 - hazard_away(u, e));
		b->login[2] = b->login[2] * 0.5 + b->login[1];
		b->login[1] = 0;
		for (int last = -1; last < (int)n; last++) {
			const double *row = choice_row(u, b, last);
			double m = b->push[1 + last];

			if (m <= 0)
				continue;
			for (guint j = 0; j < n; j++) {
				if (was_app[j])
					b->n_switched[j] += m * row[j];
			}
		}
	}
	for (guint j = 0; j < n; j++)
		total += b->n_started[j] + b->n_switched[j];
	for (guint e = 0; e <= u->idle_max; e++)
		total += b->n_away[e];
	total += b->login[1] + b->login[2];
	if (!(total > 0)) {
		/* Nothing the model allows explains it: start over from the start seen. */
		memset(b->n_started, 0, n * sizeof(double));
		memset(b->n_away, 0, (u->idle_max + 1) * sizeof(double));
		memset(b->n_switched, 0, n * sizeof(double));
		b->login[1] = b->login[2] = 0;
		if (start >= 0)
			b->n_started[start] = 1;
		else
			b->login[2] = 1;
		total = 1;
	}
	for (guint j = 0; j < n; j++) {
		b->started[j] = b->n_started[j] / total;
		b->switched[j] = b->n_switched[j] / total;
	}
	for (guint e = 0; e <= u->idle_max; e++)
		b->away[e] = b->n_away[e] / total;
	b->login[1] /= total;
	b->login[2] /= total;
}

static Bound *
bound_new(Gen *gen, FILE *out, gint64 cycle)
{
	Bound *bd = g_new0(Bound, 1);
	guint n = gen->exes->len;

	bd->out = out;
	bd->ids = g_hash_table_new(NULL, NULL);
	bd->was = g_new0(gboolean, n);
	bd->is = g_new0(gboolean, n);
	bd->since = g_new0(gint64, n);
	bd->p = g_new0(double, n);
	bd->tool_project = g_new(int, n);
	bd->tool_step = g_new(int, n);
	bd->logout_at = -1;
	bd->last_user = -1;
	for (guint i = 0; i < n; i++)
		bd->tool_project[i] = bd->tool_step[i] = -1;
	for (guint p = 0; p < gen->projects->len; p++) {
		const GenProject *proj = g_ptr_array_index(gen->projects, p);

		for (guint t = 0; t < proj->tools->len; t++) {
			guint exe = g_array_index(proj->tools, guint, t);

			bd->tool_project[exe] = (int)p;
			bd->tool_step[exe] = (int)t;
		}
	}
	bd->beliefs = g_new0(Belief, gen->users->len);
	for (guint k = 0; k < gen->users->len; k++) {
		const GenUser *u = g_ptr_array_index(gen->users, k);
		Belief *b = &bd->beliefs[k];
		guint na = u->apps->len;
		double sum = 0;

		b->started = g_new0(double, na);
		b->switched = g_new0(double, na);
		b->n_started = g_new0(double, na);
		b->n_switched = g_new0(double, na);
		b->away = g_new0(double, u->idle_max + 1);
		b->n_away = g_new0(double, u->idle_max + 1);
		b->first = g_new0(double, na);
		b->push = g_new0(double, na + 1);
		for (guint j = 0; j < na; j++)
			sum += u->first[j];
		for (guint j = 0; j < na; j++)
			b->first[j] = u->first[j] / sum;
	}
	fprintf(out, "PRELOAD-BOUND\t1\t%" G_GINT64_FORMAT "\n", cycle);
	return bd;
}

static void
bound_free(Gen *gen, Bound *bd)
{
	if (!bd)
		return;
	for (guint k = 0; k < gen->users->len; k++) {
		Belief *b = &bd->beliefs[k];

		g_free(b->started);
		g_free(b->switched);
		g_free(b->n_started);
		g_free(b->n_switched);
		g_free(b->away);
		g_free(b->n_away);
		g_free(b->first);
		g_free(b->push);
	}
	g_free(bd->beliefs);
	g_hash_table_unref(bd->ids);
	g_free(bd->was);
	g_free(bd->is);
	g_free(bd->since);
	g_free(bd->p);
	g_free(bd->tool_project);
	g_free(bd->tool_step);
	g_free(bd);
}

/* Whether user k is logged in, as the scan shows it (its first desktop program runs). */
static gboolean
seen_logged_in(Gen *gen, const gboolean *running, guint k)
{
	const GenUser *u = g_ptr_array_index(gen->users, k);

	if (u->desktop->len == 0)
		return TRUE;
	return running[g_array_index(u->desktop, guint, 0)];
}

/*
 * The cycle `now` has been scanned (bd->is): update the observer and fill
 * bd->p with each program's chance to start at now + 1.
 */
static void
bound_observe(Gen *gen, Bound *bd, gint64 now)
{
	guint n = gen->exes->len;
	int tool = -1;

	for (guint i = 0; i < n; i++) {
		if (bd->is[i] && (!bd->was[i] || now == 0))
			bd->since[i] = now;
		if (bd->is[i] && bd->tool_project[i] >= 0)
			tool = (int)i;
		bd->p[i] = 0;
	}

	/* Users: logins, logouts, and their launches. */
	for (guint k = 0; k < gen->users->len; k++) {
		const GenUser *u = g_ptr_array_index(gen->users, k);
		Belief *b = &bd->beliefs[k];
		gboolean in = seen_logged_in(gen, bd->is, k);
		guint na = u->apps->len;
		g_autofree gboolean *was_app = g_new0(gboolean, na);
		int start = -1;

		if (in && (now == 0 || !seen_logged_in(gen, bd->was, k))) {
			belief_login(u, b);
			bd->last_user = (int)k;
			continue;
		}
		if (!in) {
			if (b->active)
				bd->logout_at = now;
			b->active = FALSE;
			continue;
		}
		for (guint j = 0; j < na; j++) {
			guint exe = g_array_index(u->apps, guint, j);

			was_app[j] = bd->was[exe];
			if (bd->is[exe] && !bd->was[exe])
				start = (int)j;
		}
		belief_step(u, b, start, was_app);
	}
	for (guint k = 0; k < gen->users->len; k++) {
		const GenUser *u = g_ptr_array_index(gen->users, k);
		Belief *b = &bd->beliefs[k];
		guint na = u->apps->len;

		if (!b->active)
			continue;
		belief_push(u, b);
		for (int last = -1; last < (int)na; last++) {
			const double *row = choice_row(u, b, last);
			double m = b->push[1 + last];

			if (m <= 0)
				continue;
			for (guint j = 0; j < na; j++) {
				guint exe = g_array_index(u->apps, guint, j);

				if (!bd->is[exe])
					bd->p[exe] += m * row[j];
			}
		}
	}

	/* two-user: the next login, 3 to 30 cycles after a logout, of the other user. */
	if (gen->users->len > 1 && bd->last_user >= 0 && bd->logout_at >= 0 &&
	    !bd->beliefs[0].active && !bd->beliefs[1].active) {
		gint64 d = now + 1 - bd->logout_at;
		double h = d < 3 ? 0 : d >= 30 ? 1 : 1.0 / (double)(31 - d);
		const GenUser *next = g_ptr_array_index(gen->users, bd->last_user == 0 ? 1 : 0);

		for (guint i = 0; i < next->desktop->len; i++)
			bd->p[g_array_index(next->desktop, guint, i)] = h;
	}

	/* scale: the next tool of a build, or the first of the next build. */
	if (gen->projects->len > 0) {
		if (tool >= 0) {
			const GenProject *proj = g_ptr_array_index(gen->projects, bd->tool_project[tool]);
			guint step = (guint)bd->tool_step[tool] + 1;

			bd->built = TRUE;
			/* a tool runs 1 or 2 cycles, each with probability 1/2 */
			if (step < proj->tools->len)
				bd->p[g_array_index(proj->tools, guint, step)] =
					bd->since[tool] == now ? 0.5 : 1.0;
		} else {
			double h = bd->built ? hazard_of_mean(gen->build_gap) : now + 1 == 5 ? 1 : 0;
			double total = 0;

			for (guint p = 0; p < gen->projects->len; p++)
				total += ((GenProject *)g_ptr_array_index(gen->projects, p))->weight;
			for (guint p = 0; p < gen->projects->len; p++) {
				const GenProject *proj = g_ptr_array_index(gen->projects, p);

				bd->p[g_array_index(proj->tools, guint, 0)] = h * proj->weight / total;
			}
		}
	}
}

/* One B line: the scan time of this cycle and the programs' chances, with P lines first. */
static void
bound_write(Gen *gen, Bound *bd, gint64 time)
{
	guint n = gen->exes->len, count = 0;

	for (guint i = 0; i < n; i++) {
		if (bd->p[i] > 0 && !g_hash_table_contains(bd->ids, GUINT_TO_POINTER(i + 1))) {
			g_autofree char *uri = g_filename_to_uri(exe_at(gen, i)->path, NULL, NULL);
			guint id = g_hash_table_size(bd->ids);

			g_hash_table_insert(bd->ids, GUINT_TO_POINTER(i + 1), GUINT_TO_POINTER(id + 1));
			fprintf(bd->out, "P\t%u\t%s\n", id, uri);
		}
		if (bd->p[i] > 0)
			count++;
	}
	fprintf(bd->out, "B\t%" G_GINT64_FORMAT "\t%u", time, count);
	for (guint i = 0; i < n; i++) {
		if (bd->p[i] > 0)
			fprintf(bd->out, "\t%u\t%.6g",
				GPOINTER_TO_UINT(g_hash_table_lookup(bd->ids, GUINT_TO_POINTER(i + 1))) - 1,
				MIN(bd->p[i], 1.0));
	}
	fputc('\n', bd->out);
	bd->lines++;
}

/* ---- scenarios ---- */

typedef struct Scenario {
	const char *name;
	const char *summary;
	void (*build)(Gen *gen);
} Scenario;

static void
add_system(Gen *gen, const Shared *shared)
{
	g_autoptr(GArray) sys = apps_from_specs(gen, shared, system_specs,
						G_N_ELEMENTS(system_specs));

	g_array_append_vals(gen->system, sys->data, sys->len);
}

static void
build_single_user(Gen *gen)
{
	Shared shared = { 0 };
	GArray *desktop, *apps;

	shared_init(gen, &shared);
	add_system(gen, &shared);
	desktop = apps_from_specs(gen, &shared, gnome_desktop_specs,
				  G_N_ELEMENTS(gnome_desktop_specs));
	apps = apps_from_specs(gen, &shared, gnome_app_specs, G_N_ELEMENTS(gnome_app_specs));
	g_ptr_array_add(gen->users, user_new(gen, apps, desktop, 2, 0.7));
	gen->mem_total = 8 * 1024 * 1024;
	gen->budget_share = 0.25;
	shared_clear(&shared);
}

static void
build_two_user(Gen *gen)
{
	Shared shared = { 0 };
	GArray *gnome_desktop, *kde_desktop, *gnome_apps, *kde_apps;
	guint firefox;

	shared_init(gen, &shared);
	add_system(gen, &shared);
	gnome_desktop = apps_from_specs(gen, &shared, gnome_desktop_specs,
					G_N_ELEMENTS(gnome_desktop_specs));
	kde_desktop = apps_from_specs(gen, &shared, kde_desktop_specs,
				      G_N_ELEMENTS(kde_desktop_specs));
	gnome_apps = apps_from_specs(gen, &shared, gnome_app_specs, 11);
	kde_apps = apps_from_specs(gen, &shared, kde_app_specs, 10);
	/* Both use Firefox: the KDE user's first application is GNOME's. */
	firefox = g_array_index(gnome_apps, guint, 0);
	g_array_prepend_val(kde_apps, firefox);
	g_ptr_array_add(gen->users, user_new(gen, gnome_apps, gnome_desktop, 2, 0.7));
	g_ptr_array_add(gen->users, user_new(gen, kde_apps, kde_desktop, 2, 0.7));
	gen->mem_total = 4 * 1024 * 1024;
	gen->budget_share = 0.3;
	shared_clear(&shared);
}

/* Many small applications used almost at random. */
static void
build_churn(Gen *gen)
{
	Shared shared = { 0 };
	GArray *apps = g_array_new(FALSE, FALSE, sizeof(guint));
	GenUser *u;

	shared_init(gen, &shared);
	add_system(gen, &shared);
	for (guint i = 0; i < 60; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/churn-app-%02u", i);
		AppSpec spec = { path, i % 3 == 0 ? STACK_KDE : STACK_GTK,
				 log_uniform(gen, 50, 3000), log_uniform(gen, 2, 60),
				 log_uniform(gen, 2, 8) };
		guint exe = app_new(gen, &shared, &spec);

		g_array_append_val(apps, exe);
	}
	u = user_new(gen, apps, NULL, 1, 0.15);
	u->mean_gap = 2;
	u->p_idle = 0.01;
	u->idle_min = 10;
	u->idle_max = 60;
	g_ptr_array_add(gen->users, u);
	gen->mem_total = 8 * 1024 * 1024;
	gen->budget_share = 0.15;
	shared_clear(&shared);
}

/*
 * Many applications with weak structure: 30 applications, some used far
 * more than others (weight 1/(i+1)); each has one favourite successor
 * that takes 15 % of what follows it, the rest follows the applications'
 * popularity. Who starts next depends more on how popular each program
 * is than on what ran before it: ranking by frequency does well here.
 */
static void
build_weak(Gen *gen)
{
	Shared shared = { 0 };
	GArray *desktop, *apps = g_array_new(FALSE, FALSE, sizeof(guint));
	double popularity[30];

	shared_init(gen, &shared);
	add_system(gen, &shared);
	desktop = apps_from_specs(gen, &shared, gnome_desktop_specs,
				  G_N_ELEMENTS(gnome_desktop_specs));
	for (guint i = 0; i < G_N_ELEMENTS(popularity); i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/weak-app-%02u", i);
		AppSpec spec = { path, i % 3 == 0 ? STACK_KDE : STACK_GTK,
				 log_uniform(gen, 100, 3000), log_uniform(gen, 2, 80),
				 log_uniform(gen, 4, 40) };
		guint exe = app_new(gen, &shared, &spec);

		g_array_append_val(apps, exe);
		popularity[i] = 1.0 / (i + 1);
	}
	g_ptr_array_add(gen->users, user_new_weighted(gen, apps, desktop, 1, 0.15, popularity));
	gen->mem_total = 8 * 1024 * 1024;
	gen->budget_share = 0.2;
	shared_clear(&shared);
}

/*
 * A developer's machine: the single-user desktop, and builds of 46
 * projects (--projects), each running its own 24 tools in a fixed order,
 * which makes more than a thousand distinct executables.
 */
static void
build_scale(Gen *gen)
{
	Shared shared = { 0 };
	GArray *desktop, *apps;

	shared_init(gen, &shared);
	add_system(gen, &shared);
	desktop = apps_from_specs(gen, &shared, gnome_desktop_specs,
				  G_N_ELEMENTS(gnome_desktop_specs));
	apps = apps_from_specs(gen, &shared, gnome_app_specs, G_N_ELEMENTS(gnome_app_specs));
	g_ptr_array_add(gen->users, user_new(gen, apps, desktop, 2, 0.7));

	for (guint p = 0; p < gen->n_projects; p++) {
		GenProject *proj = g_new0(GenProject, 1);
		g_autofree char *libpath = g_strdup_printf("/usr/lib/proj%02u/libproj%02u.so", p, p);
		guint lib = elf_new(gen, libpath, log_uniform(gen, 2000, 12000));

		proj->tools = g_array_new(FALSE, FALSE, sizeof(guint));
		proj->weight = 1.0 / (p + 1);   /* a few projects are built most */
		for (guint t = 0; t < 24; t++) {
			GenExe *exe = g_new0(GenExe, 1);
			guint index;

			exe->path = g_strdup_printf("/usr/libexec/proj%02u/tool%02u", p, t);
			exe->maps = g_array_new(FALSE, FALSE, sizeof(GenSeg));
			exe->stop_at = -1;
			exe_add_file(exe, gen, elf_new(gen, exe->path, log_uniform(gen, 100, 3000)));
			exe_add_files(exe, gen, shared.core, 1.0);
			exe_add_file(exe, gen, lib);
			g_ptr_array_add(gen->exes, exe);
			index = gen->exes->len - 1;
			g_array_append_val(proj->tools, index);
		}
		g_ptr_array_add(gen->projects, proj);
	}
	gen->build_rate = 1.0 / gen->build_gap;
	gen->next_build = 5;
	gen->mem_total = 16 * 1024 * 1024;
	gen->budget_share = 0.1;
	shared_clear(&shared);
}

static const Scenario scenarios[] = {
	{ "single-user", "one GNOME user, 16 applications following each other", build_single_user },
	{ "two-user", "a GNOME and a KDE user taking turns, sharing only Firefox", build_two_user },
	{ "churn", "60 applications used almost at random, in short sessions", build_churn },
	{ "scale", "single-user plus 46 projects' builds: over 1,100 executables", build_scale },
	{ "weak", "30 applications of unequal popularity, with weak structure", build_weak },
};

/*
 * The budget target: a share of the bytes all applications map, counting
 * each range once. MemFree is then chosen so that the default budget
 * max(0, -10 % MemTotal + 50 % MemFree) comes out at that target.
 */
static void
choose_memory(Gen *gen)
{
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	guint64 bytes = 0;

	for (guint i = 0; i < gen->exes->len; i++) {
		const GenExe *exe = exe_at(gen, i);

		for (guint k = 0; k < exe->maps->len; k++) {
			const GenSeg *seg = &g_array_index(exe->maps, GenSeg, k);
			const GenFile *f = g_ptr_array_index(gen->files, seg->file);
			g_autofree char *key = g_strdup_printf("%s:%" G_GUINT64_FORMAT, f->path,
							       seg->offset);

			if (g_hash_table_contains(seen, key))
				continue;
			g_hash_table_add(seen, g_steal_pointer(&key));
			bytes += seg->length;
		}
	}
	gen->budget_kb = (guint64)(gen->budget_share * (double)bytes / KB);
	/* 50 * (free / 100) - 10 * (total / 100) = budget */
	gen->free_kb = 2 * (gen->budget_kb + 10 * (gen->mem_total / 100)) + 200;
}

static void
memory_now(Gen *gen, ProcMemstat *mem)
{
	/* MemFree wanders a little (+-2 %), as it does on a live system. */
	double wobble = 0.98 + 0.04 * uniform(gen);

	mem->total = gen->mem_total;
	mem->free = (guint64)((double)gen->free_kb * wobble);
	mem->buffers = gen->mem_total / 50;
	mem->cached = (gen->mem_total - mem->free) / 2;
	mem->available = mem->free + mem->cached * 4 / 5;
}

/* ---- main ---- */

static gboolean
write_maps(Gen *gen, TraceWriter *tw, GenExe *exe, GError **error)
{
	g_autoptr(GArray) maps = g_array_new(FALSE, TRUE, sizeof(ProcMap));
	guint64 address = G_GUINT64_CONSTANT(0x55d000000000);

	g_array_set_clear_func(maps, proc_map_clear);
	for (guint i = 0; i < exe->maps->len; i++) {
		const GenSeg *seg = &g_array_index(exe->maps, GenSeg, i);
		const GenFile *f = g_ptr_array_index(gen->files, seg->file);
		ProcMap m = { 0 };

		m.start = address;
		m.end = address + seg->length;
		m.offset = seg->offset;
		m.path = g_strdup(f->path);
		g_array_append_val(maps, m);
		address = m.end + PAGE;
	}
	exe->maps_written = TRUE;
	return trace_writer_maps(tw, exe->path, maps, 0, error);
}

static gboolean
simulate(Gen *gen, TraceWriter *tw, Bound *bd, gint64 cycle, gint64 cycles, GError **error)
{
	g_autoptr(GPtrArray) running = g_ptr_array_new();
	g_autoptr(GPtrArray) fresh = g_ptr_array_new();

	for (guint i = 0; i < gen->system->len; i++)
		start(gen, g_array_index(gen->system, guint, i), 0, G_MAXINT64 / 2);
	if (gen->users->len == 1) {
		user_login(gen, g_ptr_array_index(gen->users, 0), 0, G_MAXINT64 / 2);
	} else if (gen->users->len > 1) {
		gen->waiting = 0;
		gen->next_login = 0;
	}

	for (gint64 now = 0; now < cycles; now++) {
		ProcMemstat mem;

		turns_step(gen, now);
		for (guint i = 0; i < gen->users->len; i++)
			user_step(gen, g_ptr_array_index(gen->users, i), now);
		builds_step(gen, now);

		g_ptr_array_set_size(running, 0);
		g_ptr_array_set_size(fresh, 0);
		for (guint i = 0; i < gen->exes->len; i++) {
			GenExe *exe = exe_at(gen, i);

			if (bd)
				bd->is[i] = is_running(exe, now);
			if (!is_running(exe, now))
				continue;
			g_ptr_array_add(running, exe->path);
			if (!exe->maps_written)
				g_ptr_array_add(fresh, exe);
		}
		memory_now(gen, &mem);
		/* As the daemon writes them: the scan, then the maps it read. */
		if (!trace_writer_scan(tw, now * cycle, &mem, (const char *const *)running->pdata,
				       running->len, error))
			return FALSE;
		for (guint i = 0; i < fresh->len; i++) {
			if (!write_maps(gen, tw, g_ptr_array_index(fresh, i), error))
				return FALSE;
		}
		if (bd) {
			gboolean *swap;

			bound_observe(gen, bd, now);
			bound_write(gen, bd, now * cycle);
			swap = bd->was;
			bd->was = bd->is;
			bd->is = swap;
		}
	}
	return TRUE;
}

static const Scenario *
find_scenario(const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(scenarios); i++) {
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(Gen) gen = NULL;
	g_autofree char *output = NULL;
	g_autofree char *bound_path = NULL;
	FILE *bound_out = NULL;
	Bound *bd = NULL;
	gboolean ok;
	g_autofree char *description = NULL;
	g_autoptr(GString) list = g_string_new("Scenarios:\n");
	gint64 cycles = 10000, cycle = 20, seed = 1, projects = 46, build_gap = 40;
	gboolean show_list = FALSE;
	const Scenario *scenario;
	TraceWriter *tw;
	GOptionEntry entries[] = {
		{ "cycles", 'n', 0, G_OPTION_ARG_INT64, &cycles, "Cycles to simulate (10000)", "N" },
		{ "cycle", 'c', 0, G_OPTION_ARG_INT64, &cycle, "Seconds per cycle (20)", "SECONDS" },
		{ "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Random seed (1)", "S" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Trace file (default: stdout)", "FILE" },
		{ "projects", 'p', 0, G_OPTION_ARG_INT64, &projects,
		  "scale: projects, 24 tools each (46)", "N" },
		{ "build-gap", 'g', 0, G_OPTION_ARG_INT64, &build_gap,
		  "scale: mean cycles between builds (40)", "CYCLES" },
		{ "bound", 'b', 0, G_OPTION_ARG_FILENAME, &bound_path,
		  "Also write the true model's forecast of each cycle to FILE (for preload-replay --bound)",
		  "FILE" },
		{ "list", 'l', 0, G_OPTION_ARG_NONE, &show_list, "List the scenarios", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(scenarios); i++)
		g_string_append_printf(list, "  %-12s %s\n", scenarios[i].name, scenarios[i].summary);
	context = g_option_context_new("SCENARIO - write a synthetic preload trace");
	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_description(context, list->str);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "preload-tracegen: %s\n", error->message);
		return 2;
	}
	if (show_list) {
		fputs(list->str, stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "preload-tracegen: give one scenario (--list shows them)\n");
		return 2;
	}
	scenario = find_scenario(argv[1]);
	if (!scenario) {
		fprintf(stderr, "preload-tracegen: unknown scenario \"%s\" (--list shows them)\n",
			argv[1]);
		return 2;
	}
	if (cycles < 1 || cycles > G_MAXINT32 || cycle < 2 || cycle > 3600 ||
	    seed < 0 || seed > G_MAXUINT32 || projects < 1 || projects > 10000 ||
	    build_gap < 1 || build_gap > 1000000) {
		fprintf(stderr, "preload-tracegen: --cycles must be at least 1, --cycle 2 to 3600, "
			"--seed 0 to %u, --projects 1 to 10000 and --build-gap 1 to 1000000\n",
			G_MAXUINT32);
		return 2;
	}

	gen = gen_new((guint32)seed);
	gen->n_projects = (guint)projects;
	gen->build_gap = (double)build_gap;
	scenario->build(gen);
	choose_memory(gen);

	tw = trace_writer_open(output ? output : "/dev/stdout", cycle, &error);
	if (!tw) {
		fprintf(stderr, "preload-tracegen: %s\n", error->message);
		return 1;
	}
	if (bound_path) {
		bound_out = fopen(bound_path, "w");
		if (!bound_out) {
			fprintf(stderr, "preload-tracegen: %s: %s\n", bound_path, g_strerror(errno));
			trace_writer_free(tw);
			return 1;
		}
		bd = bound_new(gen, bound_out, cycle);
	}
	ok = simulate(gen, tw, bd, cycle, cycles, &error);
	if (bd) {
		fprintf(bound_out, "END\t%u\n", bd->lines);
		bound_free(gen, bd);
		if (fclose(bound_out) != 0 && ok) {
			fprintf(stderr, "preload-tracegen: %s: %s\n", bound_path, g_strerror(errno));
			trace_writer_free(tw);
			return 1;
		}
	}
	if (!ok) {
		trace_writer_free(tw);
		fprintf(stderr, "preload-tracegen: %s\n", error->message);
		return 1;
	}
	if (!trace_writer_close(tw, &error)) {
		fprintf(stderr, "preload-tracegen: %s\n", error->message);
		return 1;
	}
	description = g_strdup_printf("%s: %u executables, %u files, budget about %"
				      G_GUINT64_FORMAT " KB (MemTotal %" G_GUINT64_FORMAT
				      " KB, MemFree about %" G_GUINT64_FORMAT " KB)",
				      scenario->name, gen->exes->len, gen->files->len,
				      gen->budget_kb, gen->mem_total, gen->free_kb);
	if (output)
		printf("%s\n", description);
	return 0;
}
