/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Power: reads /sys/class/power_supply and tells AC from battery.
 *
 * The daemon asks once per cycle whether to prefetch; on battery it may
 * read less or nothing (the batterybudget key), so that a laptop's disk
 * is not woken for speculative reads. The decision is a pure function of
 * the parsed entries (power_decide()); power_get() only reads the tree
 * under the injected root and caches the answer for one stamp.
 */
#include "config.h"

#include "power.h"

#include <string.h>

struct Power {
	char *dir;            /* SYSROOT/class/power_supply */
	gboolean have;        /* source and stamp hold a reading */
	gint64 stamp;         /* the stamp of the last reading */
	PowerSource source;   /* its result */
	guint reads;          /* readings so far */
};

/* Types of supplies that power the machine from outside. */
static gboolean
is_external(const char *type)
{
	return g_strcmp0(type, "Mains") == 0 || g_str_has_prefix(type, "USB") ||
	       g_strcmp0(type, "Wireless") == 0 || g_strcmp0(type, "BrickID") == 0;
}

/* A battery of this machine, not of a peripheral (scope Device) nor a UPS. */
static gboolean
is_system_battery(const PowerSupply *supply)
{
	return g_strcmp0(supply->type, "Battery") == 0 &&
	       g_strcmp0(supply->scope, "Device") != 0;
}

PowerSource
power_decide(const PowerSupply *supplies, gsize n)
{
	gboolean external_offline = FALSE;
	gboolean battery_unknown = FALSE;
	gboolean discharging = FALSE;

	g_return_val_if_fail(supplies != NULL || n == 0, POWER_AC);

	for (gsize i = 0; i < n; i++) {
		const PowerSupply *s = &supplies[i];

		if (is_external(s->type)) {
			if (s->online > 0)
				return POWER_AC;
			if (s->online == 0)
				external_offline = TRUE;
		} else if (is_system_battery(s)) {
			if (g_strcmp0(s->status, "Discharging") == 0)
				discharging = TRUE;
			else if (!s->status || g_strcmp0(s->status, "Unknown") == 0)
				battery_unknown = TRUE;
		}
	}
	if (discharging || (external_offline && battery_unknown))
		return POWER_BATTERY;
	return POWER_AC;
}

const char *
power_source_name(PowerSource source)
{
	return source == POWER_BATTERY ? "on battery" : "on AC";
}

Power *
power_new(const char *sysroot)
{
	Power *power = g_new0(Power, 1);

	power->dir = g_build_filename(sysroot ? sysroot : "/sys", "class", "power_supply", NULL);
	return power;
}

void
power_free(Power *power)
{
	if (!power)
		return;
	g_free(power->dir);
	g_free(power);
}

/* The first line of DIR/NAME/FILE, or NULL if it cannot be read. */
static char *
read_attr(const char *dir, const char *name, const char *file)
{
	g_autofree char *path = g_build_filename(dir, name, file, NULL);
	char *text = NULL;

	/* sysfs attributes are a line; a few bytes, read whole. */
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* -1 when absent or not a number. */
static int
parse_online(const char *text)
{
	guint64 value;

	if (!text || !g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT, &value, NULL))
		return -1;
	return (int)value;
}

/* Reads every entry of the tree; a missing or unreadable tree has none. */
static PowerSource
power_read(const Power *power)
{
	g_autoptr(GDir) dir = g_dir_open(power->dir, 0, NULL);
	g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) supplies = g_array_new(FALSE, TRUE, sizeof(PowerSupply));
	const char *name;

	if (!dir)
		return POWER_AC;
	while ((name = g_dir_read_name(dir))) {
		PowerSupply supply = { 0 };
		char *online;

		/* An entry whose type cannot be read could be anything: skipped. */
		supply.type = read_attr(power->dir, name, "type");
		if (!supply.type)
			continue;
		g_ptr_array_add(texts, (char *)supply.type);
		if (is_external(supply.type)) {
			online = read_attr(power->dir, name, "online");
			supply.online = parse_online(online);
			g_free(online);
		} else {
			supply.online = -1;
			if ((supply.status = read_attr(power->dir, name, "status")))
				g_ptr_array_add(texts, (char *)supply.status);
			if ((supply.scope = read_attr(power->dir, name, "scope")))
				g_ptr_array_add(texts, (char *)supply.scope);
		}
		g_array_append_val(supplies, supply);
	}
	return power_decide((const PowerSupply *)(void *)supplies->data, supplies->len);
}

PowerSource
power_get(Power *power, gint64 stamp)
{
	g_return_val_if_fail(power != NULL, POWER_AC);

	if (power->have && power->stamp == stamp)
		return power->source;
	power->source = power_read(power);
	power->stamp = stamp;
	power->have = TRUE;
	power->reads++;
	return power->source;
}

guint
power_reads(const Power *power)
{
	g_return_val_if_fail(power != NULL, 0);
	return power->reads;
}
