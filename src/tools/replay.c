/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preload-replay: how well would preload have predicted this trace?
 *
 * Reads a trace recorded by the daemon (or made by preload-tracegen),
 * replays it through the daemon's own model and predictor (replay-lib.c)
 * and prints, for preload's predictor, the thesis' naive predictor and an
 * oracle, the share of the maps (and of their bytes) of every starting
 * executable that the previous cycle's selection held: as a table on the
 * terminal and, with --json, as JSON for scripts and for comparing runs.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "replay-lib.h"
#include "trace.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,      /* unreadable trace or configuration */
	EXIT_USAGE = 2,
};

typedef struct Args {
	char *conffile;
	gint64 budget_kb;
	char *json;
	gboolean every_cycle;
	gboolean quiet;
	char *save_state;
	char *bound;
	gint64 from_cycle;
	gint64 restart_at;
	char *starts;
	const char *trace;
} Args;

static double
percent(guint64 part, guint64 whole)
{
	return 100.0 * replay_ratio(part, whole);
}

static double
mean(double sum, guint64 n)
{
	return n ? sum / (double)n : 0.0;
}

static void
print_table(FILE *out, const Args *args, const Conf *conf, const ReplayResult *res,
	    double seconds)
{
	g_autofree char *name = g_filename_display_name(args->trace);

	fprintf(out, "trace     %s: %" G_GUINT64_FORMAT " cycles of %" G_GINT64_FORMAT " s%s\n",
		name, res->scans, res->cycle, res->complete ? "" : " (cut short)");
	fprintf(out, "model     %u exes (%u too small), %u maps, %u chains at the end\n",
		res->exes, res->bad_exes, res->maps, res->chains);
	if (args->budget_kb >= 0)
		fprintf(out, "budget    fixed: %" G_GINT64_FORMAT " KB\n", args->budget_kb);
	else
		fprintf(out, "budget    from meminfo (memtotal %" G_GINT64_FORMAT " %%, memfree %"
			G_GINT64_FORMAT " %%, memcached %" G_GINT64_FORMAT " %%): mean %.0f KB, %"
			G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " KB\n",
			conf->memtotal, conf->memfree, conf->memcached,
			mean((double)res->budget_kb_sum, res->scans),
			res->budget_kb_min, res->budget_kb_max);
	fprintf(out, "starts    %" G_GUINT64_FORMAT " scored (%" G_GUINT64_FORMAT
		" of unknown exes not scored): %" G_GUINT64_FORMAT " maps, %.1f MB,\n"
		"          of which %" G_GUINT64_FORMAT " maps, %.1f MB cold (no running exe used them)\n",
		res->starts, res->unscored_starts, res->maps_total,
		(double)res->bytes_total / (1024.0 * 1024.0), res->maps_cold,
		(double)res->bytes_cold / (1024.0 * 1024.0));
	fprintf(out, "\n");
	fprintf(out, "%-9s  %-30s  %-15s  %-15s  %9s\n", "",
		"prefetched (thesis hit ratio)", "cold: not in use", "ready at start", "selected");
	fprintf(out, "%-9s  %6s %6s  %15s  %15s  %15s  %9s\n", "predictor", "maps", "bytes",
		"per start m / b", "maps / bytes", "maps / bytes", "mean KB");
	for (int p = 0; p < REPLAY_N_PREDICTORS; p++) {
		const ReplayScore *s = &res->score[p];

		if (p == REPLAY_BOUND && !res->have_bound)
			continue;
		fprintf(out, "%-9s  %5.1f%% %5.1f%%  %5.1f%% / %5.1f%%  %5.1f%% / %5.1f%%  "
			"%5.1f%% / %5.1f%%  %9.0f\n",
			replay_predictor_name(p),
			percent(s->maps_hit, res->maps_total), percent(s->bytes_hit, res->bytes_total),
			100.0 * mean(s->ratio_maps_sum, res->starts),
			100.0 * mean(s->ratio_bytes_sum, res->starts),
			percent(s->maps_cold_hit, res->maps_cold),
			percent(s->bytes_cold_hit, res->bytes_cold),
			percent(s->maps_ready, res->maps_total), percent(s->bytes_ready, res->bytes_total),
			mean((double)s->selected_kb_sum, res->scored_cycles));
	}
	if (res->have_bound) {
		const ReplayScore *b = &res->score[REPLAY_BOUND];

		fprintf(out, "\nshare of the bound, cold bytes / prefetched bytes:");
		for (int p = 0; p < REPLAY_N_PREDICTORS; p++) {
			const ReplayScore *s = &res->score[p];

			if (p == REPLAY_BOUND)
				continue;
			fprintf(out, "%s %s %.1f%% / %.1f%%", p ? "," : "", replay_predictor_name(p),
				percent(s->bytes_cold_hit, b->bytes_cold_hit),
				percent(s->bytes_hit, b->bytes_hit));
		}
		fprintf(out, "\n");
	}
	fprintf(out, "\nreplayed in %.2f s (%.0f cycles/s; predicted on %" G_GUINT64_FORMAT
		" cycles)\n", seconds, seconds > 0 ? (double)res->scans / seconds : 0.0,
		res->predictions);
}

/* A JSON string; the path is shown in UTF-8 whatever its bytes were. */
static void
json_string(GString *out, const char *text)
{
	g_string_append_c(out, '"');
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		if (*s == '"' || *s == '\\')
			g_string_append_printf(out, "\\%c", *s);
		else if (*s < 0x20)
			g_string_append_printf(out, "\\u%04x", *s);
		else
			g_string_append_c(out, (char)*s);
	}
	g_string_append_c(out, '"');
}

/* Numbers without the locale's decimal comma. */
static void
json_double(GString *out, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append(out, g_ascii_formatd(buf, sizeof(buf), "%.6f", value));
}

/* `, "name": value`: the next member of an object. */
static void
json_field(GString *out, const char *name, double value)
{
	g_string_append_printf(out, ", \"%s\": ", name);
	json_double(out, value);
}

static char *
json_report(const Args *args, const Conf *conf, const ReplayResult *res, double seconds)
{
	g_autofree char *name = g_filename_display_name(args->trace);
	GString *out = g_string_new("{\n  \"trace\": ");

	json_string(out, name);
	g_string_append_printf(out, ",\n  \"format_version\": %d", TRACE_FORMAT_VERSION);
	g_string_append_printf(out, ",\n  \"cycle\": %" G_GINT64_FORMAT, res->cycle);
	g_string_append_printf(out, ",\n  \"cycles\": %" G_GUINT64_FORMAT, res->scans);
	g_string_append_printf(out, ",\n  \"complete\": %s", res->complete ? "true" : "false");
	g_string_append(out, ",\n  \"budget\": {");
	if (args->budget_kb >= 0)
		g_string_append_printf(out, "\"fixed_kb\": %" G_GINT64_FORMAT, args->budget_kb);
	else
		g_string_append_printf(out, "\"memtotal\": %" G_GINT64_FORMAT ", \"memfree\": %"
				       G_GINT64_FORMAT ", \"memcached\": %" G_GINT64_FORMAT,
				       conf->memtotal, conf->memfree, conf->memcached);
	g_string_append(out, ", \"mean_kb\": ");
	json_double(out, mean((double)res->budget_kb_sum, res->scans));
	g_string_append_printf(out, ", \"min_kb\": %" G_GUINT64_FORMAT ", \"max_kb\": %"
			       G_GUINT64_FORMAT "}", res->budget_kb_min, res->budget_kb_max);
	g_string_append_printf(out, ",\n  \"starts\": %" G_GUINT64_FORMAT, res->starts);
	g_string_append_printf(out, ",\n  \"unscored_starts\": %" G_GUINT64_FORMAT,
			       res->unscored_starts);
	g_string_append_printf(out, ",\n  \"maps\": %" G_GUINT64_FORMAT, res->maps_total);
	g_string_append_printf(out, ",\n  \"bytes\": %" G_GUINT64_FORMAT, res->bytes_total);
	g_string_append_printf(out, ",\n  \"cold_maps\": %" G_GUINT64_FORMAT, res->maps_cold);
	g_string_append_printf(out, ",\n  \"cold_bytes\": %" G_GUINT64_FORMAT, res->bytes_cold);
	g_string_append_printf(out, ",\n  \"model\": {\"exes\": %u, \"bad_exes\": %u, \"maps\": %u, "
			       "\"chains\": %u}", res->exes, res->bad_exes, res->maps, res->chains);
	g_string_append(out, ",\n  \"predictors\": {");
	for (int p = 0; p < REPLAY_N_PREDICTORS; p++) {
		const ReplayScore *s = &res->score[p];

		if (p == REPLAY_BOUND && !res->have_bound)
			continue;
		/* One predictor a line, so shell scripts can grep for it. */
		g_string_append_printf(out, "%s\n    \"%s\": {\"hit_ratio_maps\": ", p ? "," : "",
				       replay_predictor_name(p));
		json_double(out, replay_ratio(s->maps_hit, res->maps_total));
		json_field(out, "hit_ratio_bytes", replay_ratio(s->bytes_hit, res->bytes_total));
		json_field(out, "mean_hit_ratio_maps", mean(s->ratio_maps_sum, res->starts));
		json_field(out, "mean_hit_ratio_bytes", mean(s->ratio_bytes_sum, res->starts));
		json_field(out, "cold_hit_ratio_maps", replay_ratio(s->maps_cold_hit, res->maps_cold));
		json_field(out, "cold_hit_ratio_bytes",
			   replay_ratio(s->bytes_cold_hit, res->bytes_cold));
		json_field(out, "ready_ratio_maps", replay_ratio(s->maps_ready, res->maps_total));
		json_field(out, "ready_ratio_bytes", replay_ratio(s->bytes_ready, res->bytes_total));
		g_string_append_printf(out, ", \"maps_hit\": %" G_GUINT64_FORMAT ", \"bytes_hit\": %"
				       G_GUINT64_FORMAT, s->maps_hit, s->bytes_hit);
		json_field(out, "mean_selected_kb",
			   mean((double)s->selected_kb_sum, res->scored_cycles));
		if (res->have_bound) {
			const ReplayScore *b = &res->score[REPLAY_BOUND];

			/* 1 for the bound itself; a predictor may beat it by luck on one trace. */
			json_field(out, "bound_share_cold_bytes",
				   replay_ratio(s->bytes_cold_hit, b->bytes_cold_hit));
			json_field(out, "bound_share_bytes", replay_ratio(s->bytes_hit, b->bytes_hit));
		}
		g_string_append(out, "}");
	}
	g_string_append(out, "\n  },\n  \"predictions\": ");
	g_string_append_printf(out, "%" G_GUINT64_FORMAT, res->predictions);
	g_string_append(out, ",\n  \"seconds\": ");
	json_double(out, seconds);
	g_string_append(out, "\n}\n");
	return g_string_free(out, FALSE);
}

static gboolean
write_json(const char *path, const char *text, GError **error)
{
	if (strcmp(path, "-") == 0) {
		if (fputs(text, stdout) < 0 || fflush(stdout) != 0) {
			int errsv = errno;

			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errsv),
				    "stdout: %s", g_strerror(errsv));
			return FALSE;
		}
		return TRUE;
	}
	return g_file_set_contents(path, text, -1, error);
}

static gboolean
parse_args(int argc, char **argv, Args *args, GError **error)
{
	g_autoptr(GOptionContext) context = NULL;
	GOptionEntry entries[] = {
		{ "conffile", 'c', 0, G_OPTION_ARG_FILENAME, &args->conffile,
		  "The daemon's configuration (default: the compiled-in defaults)", "FILE" },
		{ "budget-kb", 'b', 0, G_OPTION_ARG_INT64, &args->budget_kb,
		  "A fixed memory budget instead of the one from the trace's meminfo", "KB" },
		{ "json", 'j', 0, G_OPTION_ARG_FILENAME, &args->json,
		  "Also write the results as JSON to FILE (- for stdout)", "FILE" },
		{ "every-cycle", 'e', 0, G_OPTION_ARG_NONE, &args->every_cycle,
		  "Predict at every cycle, as the daemon does (same scores, slower)", NULL },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &args->quiet, "No table on stdout", NULL },
		{ "bound", 0, 0, G_OPTION_ARG_FILENAME, &args->bound,
		  "Also score the true model's forecast from FILE (preload-tracegen --bound)", "FILE" },
		{ "from-cycle", 0, 0, G_OPTION_ARG_INT64, &args->from_cycle,
		  "Score only the starts from cycle N on (the model learns from all)", "N" },
		{ "restart-at", 0, 0, G_OPTION_ARG_INT64, &args->restart_at,
		  "Restart the daemon before cycle N: save the model to a state file and"
		  " load it back (what the file does not keep is lost)", "N" },
		{ "save-state", 's', 0, G_OPTION_ARG_FILENAME, &args->save_state,
		  "Save the model at the end to FILE, in the daemon's state format", "FILE" },
		{ "starts", 0, 0, G_OPTION_ARG_FILENAME, &args->starts,
		  "Write one line per scored start to FILE: each predictor's probability,"
		  " rank and cold bytes hit for the program", "FILE" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};

	context = g_option_context_new("TRACE - replay a preload trace and score the predictions");
	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_description(context,
		"For every start of a known executable, counts how many of its maps\n"
		"were in the selection of the cycle before, for preload's predictor, a\n"
		"naive one (by start count) and an oracle (what does start).\n");
	if (!g_option_context_parse(context, &argc, &argv, error))
		return FALSE;
	if (argc != 2) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "give one trace file");
		return FALSE;
	}
	if (args->restart_at < 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--restart-at must not be negative");
		return FALSE;
	}
	if (args->from_cycle < 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--from-cycle must not be negative");
		return FALSE;
	}
	if (args->budget_kb < -1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--budget-kb must not be negative");
		return FALSE;
	}
	args->trace = argv[1];
	return TRUE;
}

int
main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autoptr(TraceReader) tr = NULL;
	g_autofree char *json = NULL;
	Args args = { .budget_kb = -1 };
	ReplayOptions options = { 0 };
	ReplayResult result;
	FILE *starts = NULL;
	gint64 started;
	double seconds;
	gboolean ok;
	int status = EXIT_OK;

	setlocale(LC_ALL, "");
	if (!parse_args(argc, argv, &args, &error)) {
		fprintf(stderr, "preload-replay: %s\nTry 'preload-replay --help'.\n", error->message);
		status = EXIT_USAGE;
		goto out;
	}
	if (args.conffile && *args.conffile && !conf_load(conf, args.conffile, &error)) {
		fprintf(stderr, "preload-replay: %s\n", error->message);
		status = EXIT_FAILED;
		goto out;
	}
	tr = trace_reader_open(args.trace, &error);
	if (!tr) {
		fprintf(stderr, "preload-replay: %s\n", error->message);
		status = EXIT_FAILED;
		goto out;
	}

	options.conf = conf;
	options.budget_kb = args.budget_kb;
	options.every_cycle = args.every_cycle;
	options.save_state = args.save_state;
	options.bound = args.bound;
	options.from_cycle = (guint64)MAX(args.from_cycle, 0);
	options.restart_at = (guint64)MAX(args.restart_at, 0);
	if (args.starts) {
		starts = fopen(args.starts, "w");
		if (!starts) {
			fprintf(stderr, "preload-replay: cannot write %s: %s\n", args.starts,
				g_strerror(errno));
			status = EXIT_FAILED;
			goto out;
		}
		fputs("scan\tprogram\tpreload_p\tpreload_rank\tbound_p\tbound_rank\tcold_bytes"
		      "\tpreload_cold_hit\tbound_cold_hit\tlast_start\tseconds_since\n", starts);
		options.starts = starts;
	}
	started = g_get_monotonic_time();
	ok = replay_run(tr, &options, &result, &error);
	if (starts) {
		if (fclose(starts) != 0 && ok) {
			fprintf(stderr, "preload-replay: cannot write %s: %s\n", args.starts,
				g_strerror(errno));
			status = EXIT_FAILED;
		}
		starts = NULL;
	}
	seconds = (double)(g_get_monotonic_time() - started) / G_USEC_PER_SEC;
	if (!ok) {
		/* A daemon killed mid-write leaves a partial line: report what came before. */
		if (!g_error_matches(error, TRACE_ERROR, TRACE_ERROR_TRUNCATED)) {
			/* A trace error, or a state that could not be saved. */
			fprintf(stderr, "preload-replay: %s: %s\n", args.trace, error->message);
			status = EXIT_FAILED;
			goto out;
		}
		fprintf(stderr, "preload-replay: %s: %s; scoring the cycles before it\n",
			args.trace, error->message);
	}
	conf->cycle = result.cycle;

	if (!args.quiet)
		print_table(stdout, &args, conf, &result, seconds);
	if (args.json) {
		g_clear_error(&error);
		json = json_report(&args, conf, &result, seconds);
		if (!write_json(args.json, json, &error)) {
			fprintf(stderr, "preload-replay: cannot write the JSON report: %s\n",
				error->message);
			status = EXIT_FAILED;
		}
	}
out:
	g_free(args.conffile);
	g_free(args.json);
	g_free(args.save_state);
	g_free(args.bound);
	g_free(args.starts);
	return status;
}
