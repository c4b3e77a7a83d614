/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Power: whether the machine runs on battery.
 *
 * The kernel lists every power supply under /sys/class/power_supply/NAME/
 * with a `type` (Mains, USB, Battery, UPS, Wireless; older kernels also
 * USB_PD, USB_C, USB_DCP... and BrickID), and depending on the type an
 * `online` flag (external supplies: 0 or 1, some USB chargers 2) and a
 * `status` (batteries: Charging, Discharging, Not charging, Full,
 * Unknown). A `scope` of Device marks the battery of a peripheral (a
 * wireless mouse, a headset), which says nothing about this machine.
 *
 * The rule (power_decide()):
 *   - an external supply (Mains, USB*, Wireless, BrickID) online: on AC;
 *   - else a system battery Discharging: on battery;
 *   - else external supplies present, all offline, and a system battery
 *     present (its status Unknown or missing): on battery;
 *   - else on AC: a desktop with no supplies, a laptop whose battery is
 *     Full or Charging, anything that cannot be read.
 * A UPS is not a battery of this machine in this sense: it runs on its
 * battery only in a power cut, when the machine has other concerns than
 * disk wake-ups, and a desktop does not become a laptop by having one.
 *
 * The /sys root is injectable (power_new()) so tests build fake trees.
 * Reading is cheap (a directory of a few entries, two or three small
 * files each) and happens at most once per caller-given stamp.
 */
#pragma once

#include <glib.h>

typedef enum {
	POWER_AC = 0,      /* on external power, or no way to tell */
	POWER_BATTERY,     /* running on a battery of its own */
} PowerSource;

/* What one entry of power_supply says; NULL or -1 where a file is missing. */
typedef struct PowerSupply {
	const char *type;     /* "Mains", "Battery", ... */
	const char *status;   /* batteries: "Discharging", ... */
	const char *scope;    /* "System", "Device" or NULL (= System) */
	int online;           /* external supplies: 0 offline, >0 online; -1 unknown */
} PowerSupply;

/* The power source the supplies describe (rule above); n may be 0. */
PowerSource power_decide(const PowerSupply *supplies, gsize n);

/* "on AC" or "on battery", for the log. */
const char *power_source_name(PowerSource source);

typedef struct Power Power;

/*
 * A reader of SYSROOT/class/power_supply; sysroot NULL means "/sys".
 * Reads nothing yet.
 */
Power *power_new(const char *sysroot);
void power_free(Power *power);

/*
 * The power source now. The tree is read again only when `stamp` differs
 * from the stamp of the last reading (the daemon passes its cycle count,
 * so one cycle reads once however often it asks). Never fails: a missing
 * or unreadable tree is a machine without batteries, POWER_AC.
 */
PowerSource power_get(Power *power, gint64 stamp);

/* How many times power_get() read the tree, for tests and the dump. */
guint power_reads(const Power *power);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Power, power_free)
